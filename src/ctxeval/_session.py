"""The session every verb runs on: settings validated once, the qrels read once, runs prepared.

:func:`open_session` validates the policies, parses the measure names and checks the RAG and utility
settings *before* any file is read (a typo fails at once, not after minutes of reading), then reads
the side files, the qrels and the runs (a large qrels file on a second thread while the runs are
read; its error, if any, still comes first). :meth:`Session.prepare` joins one run with the qrels
and builds the side data its measures require (``ctxeval._context``), nothing more.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import cached_property
from itertools import zip_longest
from typing import TYPE_CHECKING, Any

import numpy as np

from ._context import Inputs, build, closure, needs_rows
from ._context.grades import check_scale
from ._context.settings import RagConfig, Settings
from ._core.evaldata import EvalData
from ._core.join import join
from ._core.segments import distinct
from ._engines.base import Job, Provider, provider
from ._engines.blocks import BlockFn, Mapped, overlap_check
from ._engines.local import LocalEngine
from ._errors import ConfigError
from ._io.model import Qrels, Run, split_named
from ._measures import Measure, make, parse_measures
from ._names import merge_notes
from ._policies import Policies

if TYPE_CHECKING:
    from ._context.utility import UtilityConfig
    from ._core.evaldata import EvalData

__all__ = [
    "Session",
    "coerce_utility",
    "measure_list",
    "one_run_inputs",
    "open_session",
    "prepare",
    "resolve_inputs",
    "sample_sets",
    "samples_inputs",
    "side_data",
]

_OVERLAP_QRELS_BYTES = 2 << 20  # below this, a second thread costs more than it saves


def measure_list(measures: Iterable[str | Measure] | str | Measure) -> list[Measure]:
    """Parsed, distinct measures in the order given (a name may denote several: ``P.5,10``)."""
    if isinstance(measures, (str, Measure)):
        measures = [measures]
    out: list[Measure] = []
    for m in measures:
        for parsed in parse_measures(m):
            if parsed not in out:
                out.append(parsed)
    if not out:
        raise ConfigError("no measures given")
    return out


def depth_note(name: str, depth: np.ndarray, k: int, consequence: str) -> str | None:
    """A note when ``k`` exceeds the depth of the run's ranked list (``depth``: the length of every
    list the run gives, :func:`list_depths`) on most of its queries (more than half of those the run
    retrieved for), naming the counts and the median depth; None otherwise.

    ``consequence`` says what that does to the numbers that follow (e.g. that a rate is taken over the
    passages actually given)."""
    depth = depth[~np.isnan(depth)]
    short = int((depth < k).sum())
    if depth.size == 0 or 2 * short <= depth.size:
        return None
    return (
        f"{name}: k={k} exceeds the ranked list's depth on {short} of {depth.size} queries "
        f"(median depth {float(np.median(depth)):g}); {consequence}"
    )


def list_depths(data: EvalData) -> np.ndarray:
    """Per query, the length of the run's list; NaN where the run gives none (a judged query it lacks)."""
    return np.where(data.has_run, data.n_ret, np.nan)


def side_data(measures: Iterable[Measure], rag: RagConfig, spans: bool = False) -> set[str]:
    """The side data ``measures`` require, and what the RAG settings ask for (``spans``: the labels
    are span labels)."""
    ms = list(measures)
    out: set[str] = set()
    for m in ms:
        out |= m.requires
    if rag.grade_map is not None:
        out.add("grades")
    if rag.pool is not None or rag.pools is not None or rag.pool_depth is not None:
        out.add("pool")
    if rag.groups is not None:
        out.add("groups")
    if spans and any(m.spec.on_spans is not None for m in ms):
        out.add("spans")
    return out


def coerce_utility(value: UtilityConfig | Mapping[str, Any] | None) -> UtilityConfig:
    """A :class:`UtilityConfig`, a mapping of :meth:`UtilityConfig.resolve`'s arguments, or None (the
    defaults)."""
    from ._context.utility import UtilityConfig

    if value is None:
        return UtilityConfig()
    if isinstance(value, UtilityConfig):
        return value
    if isinstance(value, Mapping):
        return UtilityConfig.resolve(**value)
    raise ConfigError(f"utility must be a UtilityConfig or a mapping of its settings, got {type(value).__name__}")


def _resolve_fits(measures: list[Measure]) -> tuple[list[Measure], dict[str, dict[str, Any]]]:
    """Measures naming a fit file renamed by the fit's content hash, and the fits by hash."""
    fits: dict[str, dict[str, Any]] = {}
    out = []
    for m in measures:
        name = m["fit"] if "fits" in m.requires else None
        if isinstance(name, str) and not name.startswith("sha256:"):
            from ._io.side import fit_hash, read_fit

            fit = read_fit(name)
            h = fit_hash(fit)
            fits[h] = fit
            m = make(m.family, {**dict(m.params), "fit": h}, m.cutoff)
        out.append(m)
    return out, fits


def _large_file(obj: Any, size: int) -> bool:
    if not isinstance(obj, (str, os.PathLike)):
        return False
    try:
        return os.stat(obj).st_size >= size
    except OSError:
        return False  # the reader reports it


def _read(qrels: Any, runs: list[Any], pol: Policies, labels: Any, engine: Provider) -> tuple[Qrels, list[Any]]:
    """The qrels and the runs (as ``engine`` holds them: read, or a handle); a large qrels file is read
    on a second thread while the runs are read (the parsers release the GIL and leave part of a core
    idle). The qrels' error comes first. ``labels``: what the qrels are, when that decides how they
    are read (subtopic qrels)."""
    duplicates, columns = pol.duplicates, pol.columns
    if not _large_file(qrels, _OVERLAP_QRELS_BYTES):
        qr = Qrels.coerce(qrels, duplicates=duplicates, columns=columns, labels=labels)
        return qr, engine.read(runs, pol)

    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(Qrels.coerce, qrels, duplicates=duplicates, columns=columns, labels=labels)
        try:
            read = engine.read(runs, pol)
        except BaseException:
            pending.result()  # a qrels error wins, as in sequential order
            raise
        return pending.result(), read


@dataclass
class Session:
    """Validated settings and the qrels, read once (see the module docstring)."""

    qrels: Qrels
    policies: Policies
    settings: Settings
    measures: list[Measure] = field(default_factory=list)
    #: what reading the runs found that the reports should say (a small query overlap), once per run
    notes: list[str] = field(default_factory=list)
    #: where per-query values are computed (:mod:`ctxeval._engines`), chosen when the session opens
    engine: Provider = field(default_factory=LocalEngine)

    @property
    def rag(self) -> RagConfig:
        return self.settings.rag

    @property
    def utility(self) -> UtilityConfig:
        """The utility configuration in force; on binary labels the detection rules leave unlabelled
        passages alone unless they were told otherwise."""
        cfg = self.settings.utility or coerce_utility(None)
        if cfg.rules.unlabelled is None and not self.qrels.plain and self.qrels.labels.binary:
            cfg = replace(cfg, rules=replace(cfg.rules, unlabelled=False))
        return cfg

    def label_notes(self, measures: Iterable[Measure], scale_read: bool = False) -> list[str]:
        """What the reports must say about the kind of the labels for ``measures`` (see
        :func:`ctxeval._context.labels.label_notes`); added to :attr:`notes` once."""
        from ._context.labels import label_notes, reads_scale

        ms = list(measures)
        if self.qrels.plain and not scale_read and not any(map(reads_scale, ms)):
            return []  # graded as read, and nothing reads the 1-5 scale: nothing to say
        # the grades and the utility settings matter only to notes about the 1-5 scale: other labels'
        # notes compute neither (a sort of every grade, the side-file readers' import)
        on_scale = scale_read or any(reads_scale(m) for m in ms)
        notes = label_notes(
            self.qrels.labels,
            ms,
            self.grades if on_scale else [],
            self.rag.grade_map,
            self.utility if on_scale else None,
            scale_read=scale_read,
        )
        for n in notes:
            if n not in self.notes:
                self.notes.append(n)
        return notes

    def needs(self, measures: Iterable[Measure]) -> set[str]:
        """The side data ``measures`` require, and what the RAG settings ask for."""
        return side_data(measures, self.rag, self.settings.spans is not None)

    def prepare(
        self,
        run: Run,
        measures: Iterable[Measure] | None = None,
        *,
        keep_rows: bool = False,
        extras: Iterable[str] = (),
        notes: list[str] | None = None,
    ) -> EvalData:
        """``run`` joined with the qrels, with the side data of ``measures`` (default: the session's)
        and ``extras`` built; ``keep_rows`` keeps every ranked row's doc id and score. What the run's
        reading found to say (a small query overlap, fairness groups it lacks) goes to ``notes``
        (default: the session's)."""
        said = self.notes if notes is None else notes
        ms = list(self.measures if measures is None else measures)
        names = self.needs(ms) | set(extras)
        rows = keep_rows or (bool(names) and needs_rows(names))
        p = self.policies
        st, qrels = self.settings, self.qrels
        if st.chunk_tables:
            from ._context.spans import run_view

            st, qrels = run_view(st, qrels, run.name, ms)
        data = join(qrels.columns, run.columns, ties=p.ties, missing=p.missing, run_name=run.name, keep_rows=rows)
        # a sample set's run and judgments come from the same samples: sharing no query is no wrong
        # file there but a set whose samples with references retrieved nothing (scored as such)
        if p.overlap == "require" and (run.samples is None or data.accounting.evaluated):
            note = overlap_check(run.name, data.accounting, run.source)
            if note and note not in said:
                said.append(note)
        if names:
            if st.pools:
                st = replace(st, pool=self.pool_for(run))
            inputs = Inputs(qrels, run, st, tuple(ms))
            data = build(data, names, inputs)
            if data.has("grades"):
                check_scale(data, ms)
            if data.tie_groups is not None:  # the side data of each order of the ties, built again for it
                data = data.with_side(lambda arranged: build(arranged, names, inputs))
            if data.has("fairness"):
                note = data.extra("fairness").note(run.name)
                if note and note not in said:
                    said.append(note)
        return data

    def blocks(
        self,
        run: Any,
        measures: Iterable[Measure],
        fn: BlockFn,
        *,
        keep_rows: bool = False,
        extras: Iterable[str] = (),
    ) -> Mapped:
        """``fn(session, data)`` over the blocks of whole queries of ``run`` (``data`` prepared as
        :meth:`prepare` prepares it), on the session's engine, merged in query-id order
        (:mod:`ctxeval._engines.blocks`); the engine refuses side data it cannot build."""
        ms = tuple(measures)
        if self.engine.capabilities.side_data is not None:
            self.engine.refuse(self.policies, self.rag, closure(self.needs(ms) | set(extras)), False)
        return self.engine.blocks(self, run, Job(ms, fn, keep_rows, tuple(extras)))

    def on(self, qrels: Qrels, pool: Run | None = None) -> Session:
        """The same session over other judgments (a block's queries) and, when given, another pool:
        what an engine prepares a block with."""
        settings = self.settings if pool is None else replace(self.settings, pool=pool)
        return replace(self, qrels=qrels, settings=settings, notes=[])

    def describe(self) -> dict[str, Any]:
        """The settings every report prints."""
        gm = self.rag.grade_map
        out = {
            "qrels": self.qrels.source,
            "ties": self.policies.ties,
            "missing": self.policies.missing,
            "duplicates": self.policies.duplicates,
            "qrels_dropped_duplicates": self.qrels.dropped_duplicates,
            "grade_map": gm.describe() if gm is not None else None,
        }
        if not self.qrels.plain:
            out["labels"] = self.qrels.labels.to_dict()
        if self.policies.overlap != "require":
            out["overlap"] = self.policies.overlap
        if self.policies.columns:
            out["columns"] = self.policies.describe()["columns"]
        fair, target = self.settings.fair_groups, self.settings.fair_targets
        if fair is not None:
            out["fairness"] = {"groups": fair.source, "target": target.source if target is not None else None}
        if self.settings.chunks is not None or self.settings.chunk_tables:
            out.update(self.budget_settings())
        return out

    def budget_settings(self) -> dict[str, Any]:
        """The chunk table, the span labels, what counts tokens and the rule for the chunk that does
        not fit a budget (every report that cuts at a budget names the tokenizer)."""
        st = self.settings
        table = st.chunks
        out: dict[str, Any] = {"chunks": table.source if table is not None else None}
        if st.chunk_tables:
            out["chunks_per_run"] = {name: t.source for name, t in st.chunk_tables.items()}
        if st.spans is not None:
            out["span_labels"] = st.spans.source
        from ._context.spans import tokenizer_of

        out["tokenizer"] = tokenizer_of(table, st.rag)
        out["overflow"] = st.rag.overflow
        return out

    @cached_property
    def grades(self) -> list[int]:
        """The distinct grades of the qrels, ascending (read once per session)."""
        return distinct(self.qrels.columns.values).tolist()

    def pool_for(self, run: Run) -> Run | None:
        """The retrieval pool of ``run``: its own (``RagConfig.pools``), the shared one, or None (the
        run is its own pool)."""
        return self.settings.pools.get(run.name, self.settings.pool)

    @property
    def has_pool(self) -> bool:
        """Whether any run has a pool other than itself."""
        return self.settings.pool is not None or bool(self.settings.pools)

    def pool_settings(self) -> dict[str, Any]:
        from ._context.pool import settings_of

        out = settings_of(self.settings)
        if self.settings.pools:
            out["per_run"] = {name: p.source for name, p in self.settings.pools.items()}
            own = "; ".join(f"{name} <- {p.name}" for name, p in self.settings.pools.items())
            out["name"] = f"{own}; other runs: {out['name']}"
        return out


def open_session(
    qrels: Any,
    runs: Any = (),
    measures: Iterable[str | Measure] | str | Measure = (),
    *,
    policies: Policies | Mapping[str, Any] | None = None,
    rag: RagConfig | Mapping[str, Any] | None = None,
    utility: UtilityConfig | Mapping[str, Any] | None = None,
    samples: Sequence[Any] = (),
    engine: Any = None,
    extras: Iterable[str] = (),
) -> tuple[Session, list[Any]]:
    """Validate everything, then read the qrels and the runs (see the module docstring). ``runs`` may
    be one run or a list; an empty list reads the qrels alone. ``samples``: the sample sets the runs
    came from, in the same order (their facets and citations serve the measures that read them); a
    run read from a sample set (:meth:`Samples.run`) brings its own. ``engine`` (see
    :mod:`ctxeval._engines`) holds the runs its way and is refused, before anything is read, what it
    cannot do for these settings, ``measures`` and the side data ``extras`` a verb will ask for."""
    pol = Policies.coerce(policies)
    ms = measure_list(measures) if (measures if not isinstance(measures, (str, Measure)) else [measures]) else []
    rcfg = RagConfig.coerce(rag)
    run_list = list(runs) if isinstance(runs, (list, tuple)) else [runs]
    ms, fits = _resolve_fits(ms)
    ucfg = coerce_utility(utility) if utility is not None else None
    eng = provider(engine)
    _refuse(eng, pol, rcfg, ms, extras, bool(samples), False)
    eng.check()
    from ._context.spans import span_inputs, span_notes

    qrels, chunks, spans = span_inputs(qrels, rcfg, ms)
    subtopic = rcfg.labels if rcfg.labels is not None and rcfg.labels.kind == "subtopic" else None
    if subtopic is None and rcfg.labels is None and isinstance(qrels, (str, os.PathLike)):
        # a diversity measure reads subtopic qrels: a qrels file given for one is read as such
        subtopic = "subtopic" if any("subtopics" in m.requires for m in ms) else None
    qr, read = _read(qrels, run_list, pol, subtopic, eng)
    from ._context.labels import resolve as resolve_labels

    qr, rcfg = resolve_labels(qr, rcfg)
    pool = Run.coerce(rcfg.pool, duplicates=pol.duplicates) if rcfg.pool is not None else None
    pools = {n: Run.coerce(v, duplicates=pol.duplicates) for n, v in runs_named(rcfg.pools, read, "pool").items()}
    tables = {}
    if rcfg.chunk_tables:
        from ._context.spans import run_tables

        tables = run_tables(runs_named(rcfg.chunk_tables, read, "chunk table"), rcfg, spans)
    origin = [st if st is not None else r.samples for r, st in zip_longest(read, samples[: len(read)])]
    if pool is None:  # a sample set's own pool lists serve its run unless the settings name one
        for r, st in zip(read, origin):
            if st is None:
                continue
            own = st.pool() if r.name not in pools else None
            if own is not None:
                pools[r.name] = own
        if pools and rcfg.pools is None:
            rcfg = replace(rcfg, pools=dict.fromkeys(pools, "<samples>"))
    groups = None
    if rcfg.groups is not None:
        from ._io.side import read_groups

        groups = read_groups(rcfg.groups)
    read = [r if st is None or r.samples is st else r.with_samples(st) for r, st in zip(read, origin)]
    settings = Settings(
        rcfg,
        pool,
        groups,
        ucfg,
        fits,
        pol.ties,
        pools,
        *_fairness(rcfg),
        chunks=chunks,
        chunk_tables=tables,
        spans=spans,
    )
    single = qr.subtopics.note() if qr.subtopics is not None else None
    notes = [single] if single else []
    notes += span_notes(chunks, spans, ms, rcfg, tables)
    _refuse(eng, pol, rcfg, ms, extras, bool(samples), spans is not None)  # a sample set's pools, now read
    return Session(qr, pol, settings, ms, notes=notes, engine=eng), read


def _refuse(
    eng: Provider, pol: Policies, rcfg: RagConfig, ms: list[Measure], extras: Iterable[str], samples: bool, spans: bool
) -> None:
    """What ``eng`` cannot do for these settings, refused in one line (see :class:`Provider`)."""
    names: set[str] = set()
    if eng.capabilities.side_data is not None:
        wanted = side_data(ms, rcfg, spans) | set(extras)
        wanted |= {
            name
            for name, given in (("chunks", rcfg.chunks or rcfg.chunk_tables or None), ("fairness", rcfg.fair_groups))
            if given is not None
        }
        names = set(closure(wanted))
    eng.refuse(pol, rcfg, names, samples)


def _fairness(rcfg: RagConfig) -> tuple[Any, Any]:
    """AWRF's group labels and given targets, read (None where not given)."""
    if rcfg.fair_groups is None:
        if rcfg.fair_target is not None:
            raise ConfigError(
                "fairness targets name groups of the fairness group labels: give those too "
                "(rag=RagConfig(fair_groups=...), --fair-groups FILE)"
            )
        return None, None
    from ._io.fairness import read_fair_groups, read_fair_targets

    groups = read_fair_groups(rcfg.fair_groups)
    return groups, read_fair_targets(rcfg.fair_target, groups) if rcfg.fair_target is not None else None


def runs_named(values: Mapping[str, Any] | None, runs: list[Run], what: str) -> dict[str, Any]:
    """Per-run settings (``RagConfig.pools``, ``chunk_tables``) keyed by the name of the run each key
    names (its name, its file path, or its file name with or without extension); a key naming no run,
    or several, is an error."""
    if not values:
        return {}
    out: dict[str, Any] = {}
    for key, value in values.items():
        hits = [
            r
            for r in runs
            if key in (r.name, r.source, os.path.basename(r.source), os.path.splitext(os.path.basename(r.source))[0])
        ]
        names = ", ".join(repr(r.name) for r in runs)
        if not hits:
            raise ConfigError(f"{what} {key}=...: no run is named {key!r} (the runs: {names})")
        if len({r.name for r in hits}) > 1:
            raise ConfigError(f"{what} {key}=...: {key!r} names several runs ({', '.join(r.name for r in hits)})")
        out[hits[0].name] = value
    return out


def with_settings(session: Session, **changes: Any) -> Session:
    """The session with some settings replaced (e.g. another utility configuration)."""
    return replace(session, settings=replace(session.settings, **changes))


def prepare(
    qrels: Any,
    run: Any,
    measures: Iterable[str | Measure] | str | Measure = (),
    *,
    policies: Policies | Mapping[str, Any] | None = None,
    rag: RagConfig | Mapping[str, Any] | None = None,
    utility: UtilityConfig | Mapping[str, Any] | None = None,
    keep_rows: bool = False,
    extras: Iterable[str] = (),
) -> EvalData:
    """One run joined with the qrels, with the side data of ``measures`` and ``extras`` built: what
    a verb computes its measures on (for tests and for measures of one's own)."""
    session, (r,) = open_session(qrels, [run], measures, policies=policies, rag=rag, utility=utility)
    return session.prepare(r, keep_rows=keep_rows, extras=extras)


def resolve_inputs(
    verb: str, qrels: Any, runs: Any, samples: Any, policies: Any, engine: Provider | None = None
) -> tuple[Any, Any, list[str], list[Any]]:
    """A verb's inputs: ``qrels`` and ``runs``, or ``samples`` (see :func:`samples_inputs`), never
    both; returns (qrels, runs, notes, sample sets). An ``engine`` that evaluates no sample sets
    refuses them before they are read."""
    if samples is not None:
        if qrels is not None or runs is not None:
            raise ConfigError("give either samples or qrels and runs, not both")
        p = Policies.coerce(policies)
        if p.columns:
            raise ConfigError(COLUMNS_WITH_SAMPLES)
        if engine is not None:
            engine.refuse(p, None, (), True)
        return samples_inputs(samples, p.duplicates)
    if qrels is None or runs is None:
        raise ConfigError(f"{verb} needs qrels and runs, or samples")
    return qrels, runs, [], []


#: the error of ``columns`` given with sample sets
COLUMNS_WITH_SAMPLES = (
    "columns (--columns) names the columns of qrels and run tables; a sample set names its fields itself "
    "(query_id, question, retrieved_ids, retrieved_contexts, reference_ids, grades, ... or RAGAS's user_input, "
    "retrieved_context_ids, reference_context_ids): rename them in the samples, or leave columns out"
)


def one_run_inputs(
    verb: str, qrels: Any, run: Any, samples: Any, policies: Any, engine: Provider | None = None
) -> tuple[Any, Any, list[str], list[Any]]:
    """The inputs of a verb that reads one run: ``qrels`` and ``run``, or one sample set (``samples``);
    returns (qrels, run, notes, sample sets)."""
    if samples is None and (qrels is None or run is None):
        raise ConfigError(f"{verb} needs qrels and a run, or one sample set (samples=...)")
    qr, runs, notes, sets = resolve_inputs(verb, qrels, run, samples, policies, engine)
    if samples is not None and len(runs) != 1:
        raise ConfigError(f"{verb} reads one run: give one sample set, not {len(runs)}")
    return qr, runs[0] if samples is not None else run, notes, sets


def samples_inputs(samples: Any, duplicates: str = "error") -> tuple[Qrels, list[Run], list[str], list[Any]]:
    """One or several sample sets (see :func:`sample_sets`) as (qrels, runs, notes, the sets): each
    set is a run, paired with the others by query id (or, without query ids, by question); the
    judgments are their references, which must be the same where two sets give a query reference ids
    or contexts, and graded judgments pooled (see :mod:`ctxeval._io.samples.across`)."""
    from ._io.samples import mismatch_notes, pair_by_question, union_qrels

    sets, paired = pair_by_question(sample_sets(samples, duplicates))
    qrels = union_qrels(sets)
    notes = [*merge_notes([st.notes for st in sets]), *paired, *mismatch_notes(sets)]
    return qrels, [st.run() for st in sets], notes, sets


def sample_sets(samples: Any, duplicates: str = "error") -> list[Any]:
    """``samples`` as a list of :class:`~ctxeval.Samples`: a set (a ``Samples``, a path, a list of
    sample mappings, a frame), a list of sets, or a mapping ``{name: set}`` naming each; a path given
    as ``NAME=PATH`` is named NAME."""
    from ._io.samples import Samples

    dup = "first" if duplicates == "first" else "error"
    named: list[tuple[str | None, Any]]
    if isinstance(samples, Mapping):
        named = [(str(name), value) for name, value in samples.items()]
        if not named:
            raise ConfigError("samples: the mapping of named sample sets is empty")
    elif isinstance(samples, (list, tuple)) and samples and not isinstance(samples[0], Mapping):
        named = [(None, s) for s in samples]
    else:
        named = [(None, samples)]
    sets = []
    for name, value in named:
        if name is None and isinstance(value, str):
            name, value = split_named(value)
        st = Samples.coerce(value, name=name, duplicates=dup)
        if name is not None and st.name != name:
            st = replace(st, name=name)
        sets.append(st)
    return sets
