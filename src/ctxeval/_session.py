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
from dataclasses import dataclass, field, replace
from functools import cached_property
from itertools import zip_longest
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ._context.settings import RagConfig, Settings
from ._core.evaldata import EvalData, QueryAccounting
from ._core.join import join
from ._core.segments import distinct
from ._errors import ConfigError, QueryMismatchError
from ._io.model import Qrels, Run
from ._measures import Measure, make, parse_measures
from ._policies import Policies

if TYPE_CHECKING:
    from ._context.utility import UtilityConfig
    from ._core.evaldata import EvalData, QueryAccounting

__all__ = [
    "Session",
    "coerce_utility",
    "measure_list",
    "merge_notes",
    "naming_notes",
    "one_run_inputs",
    "open_session",
    "prepare",
    "resolve_inputs",
    "sample_sets",
    "samples_inputs",
    "unique_names",
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


class Named(Protocol):
    """What naming reads of a run: its name (given, else its tag, else its file) and its source."""

    @property
    def name(self) -> str: ...
    @property
    def source(self) -> str: ...


def unique_names(runs: Sequence[Named]) -> list[str]:
    """Run names made distinct: runs that share a name (often a tag such as ``rank`` used by every
    run of a system) take their file names instead when those differ (:func:`naming_notes` says so);
    whatever still repeats gets ``#2``, ``#3`` ..."""
    names = [r.name for r in runs]
    out = list(names)
    for name in dict.fromkeys(names):
        at = [i for i, x in enumerate(names) if x == name]
        stems = [_file_stem(runs[i]) for i in at]
        others = set(names) - {name}
        if len(at) > 1 and all(stems) and len(set(stems)) == len(stems) and not set(stems) & others:
            for i, stem in zip(at, stems):
                out[i] = stem  # type: ignore[assignment]
    seen: dict[str, int] = {}
    final = []
    for n in out:
        k = seen.get(n, 0) + 1
        seen[n] = k
        final.append(n if k == 1 else f"{n}#{k}")
    return final


def naming_notes(runs: Sequence[Named], names: Sequence[str]) -> list[str]:
    """What :func:`unique_names` did, for the report."""
    notes = []
    for name in dict.fromkeys(r.name for r in runs):
        renamed = [n for r, n in zip(runs, names) if r.name == name and n != name]
        if renamed:
            shared = sum(r.name == name for r in runs)
            how = "named by their files" if all("#" not in n for n in renamed) else "numbered"
            notes.append(f"{shared} runs share the name {name!r} (their tag): {how} instead ({', '.join(renamed)})")
    return notes


#: an overlap below this share of the run's or of the qrels' queries is noted
SMALL_OVERLAP = 0.1


def overlap_check(name: str, acc: QueryAccounting, source: str | None = None) -> str | None:
    """A :class:`QueryMismatchError` when the run and the qrels share no query (almost always the
    wrong file: under ``missing="zero"`` every measure would read 0); a note naming the counts when
    they share less than :data:`SMALL_OVERLAP` of the run's or of the qrels' queries; else None."""
    shared = acc.evaluated
    in_run = shared + acc.unjudged
    judged = shared + acc.missing
    if shared == 0:
        run_ids = ", ".join(repr(q) for q in acc.unjudged_ids[:3])
        qrels_ids = ", ".join(repr(q) for q in acc.missing_ids[:3])
        raise QueryMismatchError(
            f"{source + ': ' if source else ''}run {name!r} shares no query with the qrels (the run's {in_run} queries, e.g. {run_ids or 'none'}; "
            f"the qrels' {judged}, e.g. {qrels_ids or 'none'}): probably the wrong file; "
            "--overlap any (overlap='any') scores it anyway"
        )
    if shared < SMALL_OVERLAP * in_run or shared < SMALL_OVERLAP * judged:
        return (
            f"{name}: the run and the qrels share only {shared} of their queries (the run has {in_run}, "
            f"the qrels {judged}): check that the files belong together"
        )
    return None


def depth_note(name: str, data: EvalData, k: int, consequence: str) -> str | None:
    """A note when ``k`` exceeds the depth of the run's ranked list on most of its queries (more than
    half of those the run retrieved for), naming the counts and the median depth; None otherwise.

    ``consequence`` says what that does to the numbers that follow (e.g. that a rate is taken over the
    passages actually given)."""
    depth = data.n_ret[data.has_run]
    short = int((depth < k).sum())
    if depth.size == 0 or 2 * short <= depth.size:
        return None
    return (
        f"{name}: k={k} exceeds the ranked list's depth on {short} of {depth.size} queries "
        f"(median depth {float(np.median(depth)):g}); {consequence}"
    )


def _file_stem(run: Named) -> str | None:
    src = run.source
    if not src or not os.path.isfile(src):
        return None
    base = os.path.basename(src)
    if base.lower().endswith(".gz"):
        base = base[:-3]
    return os.path.splitext(base)[0] or base


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


def _read(
    qrels: Any, runs: list[Any], duplicates: str, columns: Any = None, labels: Any = None
) -> tuple[Qrels, list[Run]]:
    """The qrels and the runs; a large qrels file is read on a second thread while the runs are read
    (the parsers release the GIL and leave part of a core idle). The qrels' error comes first.
    ``labels``: what the qrels are, when that decides how they are read (subtopic qrels)."""
    if not _large_file(qrels, _OVERLAP_QRELS_BYTES):
        qr = Qrels.coerce(qrels, duplicates=duplicates, columns=columns, labels=labels)
        return qr, [Run.coerce(r, duplicates=duplicates, columns=columns) for r in runs]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(Qrels.coerce, qrels, duplicates=duplicates, columns=columns, labels=labels)
        try:
            read = [Run.coerce(r, duplicates=duplicates, columns=columns) for r in runs]
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
        out: set[str] = set()
        for m in measures:
            out |= m.requires
        rag = self.rag
        if rag.grade_map is not None:
            out.add("grades")
        if rag.pool is not None or rag.pools is not None or rag.pool_depth is not None:
            out.add("pool")
        if rag.groups is not None:
            out.add("groups")
        if self.settings.spans is not None and any(m.spec.on_spans is not None for m in measures):
            out.add("spans")
        return out

    def prepare(
        self,
        run: Run,
        measures: Iterable[Measure] | None = None,
        *,
        keep_rows: bool = False,
        extras: Iterable[str] = (),
    ) -> EvalData:
        """``run`` joined with the qrels, with the side data of ``measures`` (default: the session's)
        and ``extras`` built; ``keep_rows`` keeps every ranked row's doc id and score."""
        ms = list(self.measures if measures is None else measures)
        names = self.needs(ms) | set(extras)
        if names:
            from ._context import needs_rows

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
            if note and note not in self.notes:
                self.notes.append(note)
        if names:
            from ._context import Inputs, build
            from ._context.grades import check_scale

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
                if note and note not in self.notes:
                    self.notes.append(note)
        return data

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
) -> tuple[Session, list[Run]]:
    """Validate everything, then read the qrels and the runs (see the module docstring). ``runs`` may
    be one run or a list; an empty list reads the qrels alone. ``samples``: the sample sets the runs
    came from, in the same order (their facets and citations serve the measures that read them); a
    run read from a sample set (:meth:`Samples.run`) brings its own."""
    pol = Policies.coerce(policies)
    ms = measure_list(measures) if (measures if not isinstance(measures, (str, Measure)) else [measures]) else []
    rcfg = RagConfig.coerce(rag)
    run_list = list(runs) if isinstance(runs, (list, tuple)) else [runs]
    ms, fits = _resolve_fits(ms)
    ucfg = coerce_utility(utility) if utility is not None else None
    from ._context.spans import span_inputs, span_notes

    qrels, chunks, spans = span_inputs(qrels, rcfg, ms)
    subtopic = rcfg.labels if rcfg.labels is not None and rcfg.labels.kind == "subtopic" else None
    if subtopic is None and rcfg.labels is None and isinstance(qrels, (str, os.PathLike)):
        # a diversity measure reads subtopic qrels: a qrels file given for one is read as such
        subtopic = "subtopic" if any("subtopics" in m.requires for m in ms) else None
    qr, read = _read(qrels, run_list, pol.duplicates, pol.columns, subtopic)
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
    return Session(qr, pol, settings, ms, notes=notes), read


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
    verb: str, qrels: Any, runs: Any, samples: Any, policies: Any
) -> tuple[Any, Any, list[str], list[Any]]:
    """A verb's inputs: ``qrels`` and ``runs``, or ``samples`` (see :func:`samples_inputs`), never
    both; returns (qrels, runs, notes, sample sets)."""
    if samples is not None:
        if qrels is not None or runs is not None:
            raise ConfigError("give either samples or qrels and runs, not both")
        p = Policies.coerce(policies)
        if p.columns:
            raise ConfigError(COLUMNS_WITH_SAMPLES)
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
    verb: str, qrels: Any, run: Any, samples: Any, policies: Any
) -> tuple[Any, Any, list[str], list[Any]]:
    """The inputs of a verb that reads one run: ``qrels`` and ``run``, or one sample set (``samples``);
    returns (qrels, run, notes, sample sets)."""
    if samples is None and (qrels is None or run is None):
        raise ConfigError(f"{verb} needs qrels and a run, or one sample set (samples=...)")
    qr, runs, notes, sets = resolve_inputs(verb, qrels, run, samples, policies)
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
    from ._io.model import split_named
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


def once(notes: Sequence[str], names: Iterable[str]) -> list[str]:
    """A command's notes, each said once: exact repeats dropped, and notes that open with one of
    ``names`` (runs, files) and say the same of several merged into one line naming them (see
    :func:`merge_notes`).

    >>> once(["bm25: k=10 exceeds the depth", "dense: k=10 exceeds the depth", "labels: binary", "labels: binary"],
    ...      ["bm25", "dense"])
    ['2 runs (bm25, dense): k=10 exceeds the depth', 'labels: binary']
    """
    return merge_notes([[n] for n in dict.fromkeys(notes)], "runs", frozenset(names))


def merge_notes(
    per_input: Sequence[Sequence[str]], what: str = "sample sets", names: frozenset[str] | None = None
) -> list[str]:
    """The notes of several inputs, each said once: a note repeated by several inputs apart from the
    input's name at its start (``FILE: ...``) becomes one line naming them; when they differ only in
    the count that opens the note, the line gives each input's count.

    >>> merge_notes([["a.jsonl: 3 samples give no scores"], ["b.jsonl: 5 samples give no scores"], ["b.jsonl: x"]])
    ['2 sample sets: 3 (a.jsonl), 5 (b.jsonl) samples give no scores', 'b.jsonl: x']
    >>> merge_notes([["a.jsonl: no sample has a query_id"], ["b.jsonl: no sample has a query_id"]])
    ['2 sample sets (a.jsonl, b.jsonl): no sample has a query_id']
    """
    by_rest: dict[str, list[tuple[str, str, str]]] = {}
    for notes in per_input:
        for n in notes:
            src, sep, rest = n.partition(": ")
            if names is not None and src not in names:
                src, sep, rest = "", "", n
            count, blank, tail = rest.partition(" ")
            counted = bool(sep) and count.isdigit() and bool(blank)
            key = ("#" + tail if counted else rest) if sep else n
            by_rest.setdefault(key, []).append((src if sep else "", count if counted else "", n))
    out: list[str] = []
    for key, said in by_rest.items():
        srcs = list(dict.fromkeys(s for s, _, _ in said))
        counts = list(dict.fromkeys(c for _, c, _ in said))
        if len(said) == 1 or not all(srcs) or len(srcs) < len(said):
            out.extend(dict.fromkeys(n for _, _, n in said))
        elif len(counts) == 1:
            text = f"{counts[0]} {key[1:]}" if counts[0] else key
            out.append(f"{len(srcs)} {what} ({', '.join(srcs)}): {text}")
        else:
            each = ", ".join(f"{c} ({s})" for s, c, _ in said)
            out.append(f"{len(srcs)} {what}: {each} {key[1:]}")
    return out
