"""The option groups every command shares, declared once: policies, RAG settings, per-passage
utilities, output. Each group has a decorator that adds its options and a function that turns the
parsed values into the validated settings value the verbs take."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from .._errors import ConfigError, InputError, OutputError
from .._policies import CHOICES, HELP, Policies

__all__ = [
    "UTILITY_KEYS",
    "F",
    "File",
    "apply_options",
    "emit",
    "format_option",
    "inputs_from",
    "measures_option",
    "output_option",
    "policies_from",
    "policy_options",
    "rag_from",
    "rag_options",
    "run_arguments",
    "settings_from",
    "settings_options",
    "shown",
    "utility_from",
    "utility_options",
]

#: a command's function, as the option decorators take and return it
F = Callable[..., Any]


class File(click.Path):
    """The type of every file a command reads or writes (``what``: "run", "qrels", "output", ...). A
    directory, or a file that cannot be read (or written, for an output), is the one-line error the
    readers give (``ctxeval: error: DIR: is a directory, expected a run file``, exit 2), not click's
    usage text; anything else reaches the reader, which names the file and the line of any error.
    ``NAME=FILE`` values (named runs and sample sets) are checked by the file they name."""

    def __init__(self, what: str = "input", *, writable: bool = False, allow_dash: bool = False) -> None:
        super().__init__(dir_okay=False, writable=writable, allow_dash=allow_dash)
        self.what = what

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        path = os.fspath(value)
        name, sep, named = path.partition("=")
        if sep and name and not os.path.exists(path) and os.path.exists(named):
            path = named  # NAME=FILE, read as ctxeval._io.model.split_named reads it
        error = OutputError if self.writable else InputError
        if path != "-" and os.path.isdir(path):
            raise error(f"{path}: is a directory, expected {_article(self.what)} {self.what} file")
        if path != "-" and os.path.exists(path) and not os.access(path, os.W_OK if self.writable else os.R_OK):
            raise error(
                f"{path}: permission denied (the {self.what} file cannot be {'written' if self.writable else 'read'})"
            )
        return super().convert(value, param, ctx)


def _article(word: str) -> str:
    return "an" if word[:1] in "aeio" else "a"


def apply_options(f: F, opts: Sequence[Callable[[F], F]]) -> F:
    """``f`` under the decorators ``opts``, the first outermost (the order of --help)."""
    for opt in reversed(opts):
        f = opt(f)
    return f


def shown(*decls: str, type: Any = None, default: Any, help: str | None = None) -> Callable[[F], F]:
    """An option whose --help shows its default: ``click.option(*decls, type=type, default=default,
    show_default=True, help=help)``."""
    return click.option(*decls, type=type, default=default, show_default=True, help=help)


def format_option(*formats: str, help: str | None = None) -> Callable[[F], F]:
    """``--format`` (the parameter ``fmt``), one of ``formats``, the first by default."""
    return shown("--format", "fmt", type=click.Choice(formats), default=formats[0], help=help)


def measures_option(help: str, required: bool = False) -> Callable[[F], F]:
    """``-m/--measure`` (the parameter ``measures``), repeatable, with the help its command gives it."""
    return click.option("-m", "--measure", "measures", multiple=True, required=required, help=help)


def policy_options(ties: bool = True) -> Callable[[F], F]:
    """``--missing``, ``--ties`` (unless ``ties=False``), ``--duplicates`` and ``--overlap``, from
    :mod:`ctxeval._policies`."""
    names = ("missing", "ties", "duplicates", "overlap") if ties else ("missing", "duplicates", "overlap")
    options = [shown(f"--{n}", type=click.Choice(list(CHOICES[n])), default=CHOICES[n][0], help=HELP[n]) for n in names]
    options.append(
        click.option(
            "--columns",
            metavar="ROLE=COLUMN,...",
            help="tabular input: the columns holding qid, doc, grade (qrels), score and tag (runs), "
            "e.g. qid=query-id,doc=corpus-id,grade=score",
        )
    )
    return lambda f: apply_options(f, options)


def resampling_options(resamples: str, seed: str, confidence: str) -> Callable[[F], F]:
    """``--resamples`` (bootstrap resamples), ``--seed`` and ``--confidence`` (the intervals' level),
    each with the help its command gives it."""
    options = [
        shown("--resamples", type=click.IntRange(min=1), default=10000, help=resamples),
        shown("--seed", type=click.IntRange(min=0), default=0, help=seed),
        shown(
            "--confidence", type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True), default=0.95, help=confidence
        ),
    ]
    return lambda f: apply_options(f, options)


def policies_from(kw: dict[str, Any]) -> Policies:
    """The policies among parsed options (removed from ``kw``)."""
    return Policies(**{n: kw.pop(n) for n in ("ties", "missing", "duplicates", "overlap", "columns") if n in kw})


GRADE_MAP_HELP = (
    "map qrels grades onto the 1-5 utility scale of the RAG measures: FROM:TO,... (e.g. 3:5,2:4,1:3,0:2) "
    "or a preset (trec-dl); rel= thresholds and classical measures keep the qrels' own grades"
)


LABELS_HELP = (
    "what the qrels' grades are: binary (reference ids: relevant or unlabelled), graded, a named scale "
    "(rag: 1-5, trec: 0-3), or subtopic (qid subtopic docid grade lines, for the diversity measures); default: "
    "what the input says (a sample set's reference_ids are binary, its grades graded; a judge's sidecar), else graded"
)


def rag_options(pool: bool = True, groups: bool = True) -> Callable[[F], F]:
    """``--grade-map``, ``--labels``, and ``--pool``, ``--pool-depth``, ``--allow-outside-pool``
    (``pool``), ``--groups``, ``--fair-groups``, ``--fair-target`` (``groups``), and the chunk table and
    budget options (``--chunks``, ``--documents``, ``--tokenizer``, ``--overflow``)."""
    opts: list[Callable[[F], F]] = [
        click.option("--grade-map", help=GRADE_MAP_HELP),
        click.option(
            "--labels", "labels", type=click.Choice(["binary", "graded", "rag", "trec", "subtopic"]), help=LABELS_HELP
        ),
    ]
    if pool:
        opts += [
            click.option(
                "--pool",
                "pool",
                multiple=True,
                metavar="[RUN=]POOL",
                help="the retrieval pool (a run) the runs were selected from, for PROC and %PROC; RUN=POOL gives one "
                "run its own pool (repeat per run, to mix first stages); default: each run itself",
            ),
            click.option(
                "--pool-depth", type=click.IntRange(min=1), help="cut the pool at this depth (default: its full length)"
            ),
            click.option(
                "--allow-outside-pool",
                is_flag=True,
                help="evaluate runs holding docs outside the pool (they are reported) instead of failing",
            ),
        ]
    if groups:
        opts += [
            click.option(flag, type=File("side"), help=text)
            for flag, text in (
                ("--groups", "file of 'doc_id group' lines for RA-nWG(novelty=...)"),
                (
                    "--fair-groups",
                    "the docs' fairness groups for AWRF: 'docid group [weight]' lines (group: level or "
                    "dimension=level; a doc's weights in a dimension are scaled to sum to 1) or JSON lines",
                ),
                (
                    "--fair-target",
                    "AWRF(target=given)'s target distributions: 'qid group weight' lines (group: "
                    "dimension=level&dimension=level over every dimension; qid '*' for every query) or JSON lines",
                ),
            )
        ]
    opts += [
        click.option(
            "--chunks",
            type=File("chunk table"),
            help="chunk table (JSONL, CSV, Parquet: chunk_id, doc_id, start, end[, text, tokens]): places the runs' "
            "chunks for span labels (--spans) and gives their tokens for measures at a budget (nDCG@512tok)",
        ),
        click.option(
            "--documents",
            type=click.Path(),
            help="the documents' texts (a folder of files, or JSONL of doc_id and text): tokens of chunks without a "
            "text, and span measures counted in tokens",
        ),
        click.option(
            "--tokenizer",
            help="what counts tokens for budgets: words-v1 (offline, the default unless the chunk table has a tokens "
            "column) or tiktoken:<encoding>; every report names it",
        ),
        shown(
            "--overflow",
            type=click.Choice(["stop", "skip"]),
            default="stop",
            help="the chunk that does not fit a budget: stop (leave it out and stop) or skip (leave it out, go on)",
        ),
    ]
    return lambda f: apply_options(f, opts)


def _pools(values: tuple[str, ...] | str) -> tuple[str | None, dict[str, str] | None]:
    """``--pool`` values: at most one POOL for every run, and RUN=POOL pairs."""
    from .._io.model import split_named

    shared: str | None = None
    per_run: dict[str, str] = {}
    for v in [values] if isinstance(values, str) else values:
        name, path = split_named(v)
        if name is None:
            if shared is not None:
                raise ConfigError(
                    f"--pool given twice without a run name ({shared}, {path}): one POOL for every run, "
                    "or RUN=POOL per run"
                )
            shared = path
        elif name in per_run:
            raise ConfigError(f"--pool {name}=...: given twice")
        else:
            per_run[name] = path
    return shared, per_run or None


def rag_from(kw: dict[str, Any]) -> Any:
    """The RAG settings among parsed options (removed from ``kw``): a :class:`ctxeval.RagConfig`."""
    from .._context.settings import RagConfig

    shared, per_run = _pools(kw.pop("pool", ()) or ())
    return RagConfig(
        grade_map=kw.pop("grade_map", None),
        labels=kw.pop("labels", None),
        pool=shared,
        pools=per_run,
        pool_depth=kw.pop("pool_depth", None),
        allow_outside_pool=kw.pop("allow_outside_pool", False),
        groups=kw.pop("groups", None),
        fair_groups=kw.pop("fair_groups", None),
        fair_target=kw.pop("fair_target", None),
        chunks=kw.pop("chunks", None),
        documents=kw.pop("documents", None),
        tokenizer=kw.pop("tokenizer", None),
        overflow=kw.pop("overflow", "stop"),
    )


UTILITY_KEYS = (
    "distractor_rules",
    "tau",
    "top_rank",
    "penalty",
    "distractors",
    "utilities",
    "llm_threshold",
    "utility_map",
    "flag_unlabelled",
)


def utility_options(f: F) -> F:
    """The options deciding per-passage utilities (see ``ctxeval._context.utility``)."""
    options = [
        shown(
            "--distractor-rules",
            type=click.Choice(["default", "strict", "lenient", "off"]),
            default="default",
            help="hard-negative detection preset: default (tau 0.7, top rank 3, penalty -0.5), strict (0.5, 3, -1.0), "
            "lenient (0.9, 3, -0.2), off (labels and the known list only)",
        ),
        click.option(
            "--tau",
            type=click.FloatRange(0.0, 1.0),
            help="override: a passage of utility 0 whose relative score is >= TAU is a hard negative",
        ),
        click.option(
            "--top-rank",
            type=click.IntRange(min=0),
            help="override: a passage of utility 0 (judged or unlabelled) at rank <= N is a hard negative (0: off)",
        ),
        click.option(
            "--penalty", type=click.FloatRange(-1.0, 0.0), help="override: the utility of a hard negative, in [-1, 0)"
        ),
        click.option(
            "--distractors",
            type=File("distractors"),
            help="file of known distractors, 'qid docid' lines (u = -1 whatever the label)",
        ),
        click.option(
            "--utilities",
            type=File("utilities"),
            help="file of LLM utilities, 'qid docid u' lines with u in [0, 1] (e.g. 1 - P(NO-RESPONSE)); they replace the label utilities",
        ),
        click.option(
            "--llm-threshold",
            type=click.FloatRange(0.0, 1.0),
            help="with --utilities: an irrelevant passage is a distractor (u = -LLM utility) only when its LLM utility is >= this; "
            "below, its utility is 0 (junk the LLM ignores)  [default: 0.5; 0: every irrelevant passage with u > 0]. UDCG reads u as given",
        ),
        click.option(
            "--utility-map",
            help="grade -> utility, GRADE:U,... (default 5:1,4:1,3:0.5,2:0,1:-1, on the grades after --grade-map)",
        ),
        click.option(
            "--flag-unlabelled/--no-flag-unlabelled",
            "flag_unlabelled",
            default=None,
            help="whether the hard-negative rules may flag unlabelled passages (default: yes on graded labels, "
            "no on binary labels such as reference ids, where an unlabelled chunk is not known to be harmful)",
        ),
    ]
    return apply_options(f, options)


def utility_from(kw: dict[str, Any]) -> dict[str, Any] | None:
    """The utility settings among parsed options (removed from ``kw``), as the arguments of
    :meth:`UtilityConfig.resolve`: the verb's session resolves them (reading the files they name)
    after it has validated the measure names."""
    u = {key: kw.pop(key) for key in UTILITY_KEYS}
    u["rules"] = u.pop("distractor_rules")
    if u["rules"] == "default" and all(v is None for k, v in u.items() if k != "rules"):
        return None  # nothing asked for: the defaults, resolved only if a measure needs utilities
    return u


def output_option(default: str | None = None, help: str = "write here instead of stdout") -> Callable[[F], F]:
    return click.option(
        "-o",
        "--output",
        type=File("output", writable=True),
        default=default,
        show_default=default is not None,
        help=help,
    )


def emit(text: str, output: str | None) -> None:
    """``text`` to the file ``output`` (written atomically), or to stdout."""
    if output and output != "-":
        from .._io.writers import write_text

        write_text(Path(output), text)
    else:
        click.echo(text, nl=False)


SAMPLES_HELP = (
    "the files are sample sets (JSON lines, Parquet or CSV, one sample per query: retrieved ids and references), "
    "each one run, named NAME with NAME=FILE; no qrels file"
)


def samples_option(f: F) -> F:
    """``--samples``: the positional files are sample sets instead of QRELS RUN..."""
    return click.option("--samples", "samples", is_flag=True, help=SAMPLES_HELP)(f)


def one_run_from(qrels: str, run: str | None, samples: bool) -> dict[str, Any]:
    """The inputs of a one-run verb as keywords: ``qrels`` and ``run``, or with ``--samples`` one
    sample set (``NAME=FILE`` names it) as ``samples``."""
    if samples and run is not None:
        raise ConfigError("--samples takes one sample set here (its references are the qrels), not QRELS RUN")
    if not samples and run is None:
        raise ConfigError("give QRELS and RUN, or one sample set with --samples FILE")
    return {"samples": qrels} if samples else {"qrels": qrels, "run": run}


def verb_inputs(qrels: str, runs: tuple[str, ...], samples: bool) -> dict[str, Any]:
    """The inputs of a verb as keywords: ``qrels`` and ``runs``, or with ``--samples`` the positional
    files (``NAME=FILE`` names a set) as ``samples``."""
    if samples:
        return {"samples": [qrels, *runs]}
    if not runs:
        raise ConfigError("give QRELS and at least one RUN, or sample sets with --samples FILE [FILE ...]")
    return {"qrels": qrels, "runs": list(runs)}


def run_arguments(one: bool = False, metavar: str | None = None) -> Callable[[F], F]:
    """``QRELS RUN...`` (``one``: ``QRELS [RUN]``, its ``metavar``) and ``--samples``: the inputs of a
    verb, turned into keywords by :func:`inputs_from` (or :func:`verb_inputs`, :func:`one_run_from`)."""
    runs = (
        click.argument("run", required=False, metavar=metavar, type=File("run"))
        if one
        else click.argument("runs", nargs=-1, type=File("run"))
    )
    return lambda f: apply_options(f, [click.argument("qrels", type=File("qrels")), runs, samples_option])


def inputs_from(kw: dict[str, Any], one: bool = False) -> dict[str, Any]:
    """The inputs of :func:`run_arguments` (``one``: one run) among parsed options (removed from ``kw``),
    as the keywords the verbs take."""
    qrels, samples = kw.pop("qrels"), kw.pop("samples")
    return one_run_from(qrels, kw.pop("run"), samples) if one else verb_inputs(qrels, kw.pop("runs"), samples)


def settings_options(f: F) -> F:
    """``--engine`` ..., ``--missing`` ... and ``--grade-map`` ...: :func:`engine_options`,
    :func:`policy_options` and :func:`rag_options`, in that order, as most verbs take them (read by
    :func:`settings_from`, with :func:`utility_options` where the verb has those)."""
    return apply_options(f, [engine_options, policy_options(), rag_options()])


def settings_from(kw: dict[str, Any], utility: bool = True) -> dict[str, Any]:
    """The settings of the shared option groups among parsed options (removed from ``kw``) as the
    keywords the verbs take: ``policies``, ``rag``, ``utility`` (unless the command has no utility
    options) and ``engine``, made in that order (the engine last: Spark starts only on valid settings)."""
    out = {"policies": policies_from(kw), "rag": rag_from(kw)}
    if utility:
        out["utility"] = utility_from(kw)
    out["engine"] = engine_from(kw)
    return out


def engine_options(f: F) -> F:
    """Where per-query values are computed: ``--engine`` (with ``--spark-master``), or ``--stream``
    (with ``--chunk-mb`` and ``--sort-first``)."""
    options = [
        shown(
            "--engine",
            type=click.Choice(["local", "stream", "spark"]),
            default="local",
            help="where per-query values are computed, each engine giving the same output: local (this process), "
            "stream (see --stream), spark (pip install 'ctxeval[spark]'; needs Java 17; the same kernels per "
            "partition of queries)",
        ),
        click.option(
            "--stream",
            is_flag=True,
            help="the same as --engine stream: each run file read in chunks of whole queries. Pays only for a run "
            "whose in-memory reading (about 0.6x its text, 2.5x with measures that keep every ranked row) does not "
            "fit in memory; below that the default engine is faster for the same output. A run must be grouped "
            "by query (see --sort-first)",
        ),
        click.option(
            "--chunk-mb",
            type=click.IntRange(min=1),
            help="with --stream: the chunk size [default: an eighth of the run's text, 1-64 MiB, which keeps the "
            "peak memory below the default engine's]",
        ),
        click.option(
            "--sort-first",
            is_flag=True,
            help="with --stream: group an unsorted run by query first (read whole when it fits in memory, else "
            "sorted out of core)",
        ),
        click.option("--spark-master", help="with --engine spark: the master URL (default local[*])"),
    ]
    return apply_options(f, options)


def engine_from(kw: dict[str, Any]) -> Any:
    """The engine of :func:`engine_options` (removed from ``kw``), Spark's start told on stderr;
    ``--chunk-mb`` or ``--sort-first`` alone choose the stream engine."""
    from .._engines.base import Engine, provider

    name, stream, master = kw.pop("engine"), kw.pop("stream"), kw.pop("spark_master")
    chunk_mb, sort_first = kw.pop("chunk_mb"), kw.pop("sort_first")
    if stream or ((chunk_mb is not None or sort_first) and name == "local"):
        if name not in ("local", "stream"):
            raise ConfigError(f"--stream is the stream engine, not --engine {name}: give one")
        name = "stream"
    settings = Engine(name, master, chunk_mb, sort_first)
    return provider(settings, progress=stderr_progress()) if name == "spark" else provider(settings)


def stderr_progress() -> Callable[[str, bool], None]:
    """Progress of a slow start (an engine's JVM) on stderr, each line prefixed ``ctxeval:``; counts
    (``update=True``) rewrite one line on a terminal and are left out of a log."""
    tty = sys.stderr.isatty()
    pending = [False]

    def say(text: str, update: bool = False) -> None:
        if update and not tty:
            return
        if pending[0]:
            click.echo("\r\x1b[2K", nl=False, err=True)
        click.echo(f"ctxeval: {text}", nl=not update, err=True)
        pending[0] = update

    return say


def rel_option(f: F) -> F:
    """``-l/--rel N``: trec_eval's relevance level for every measure that takes one and is not given one."""
    return click.option(
        "-l",
        "--rel",
        "rel",
        type=int,
        help="relevance level of every measure that takes one (AP, P, R, RR, ...) and names none: qrels grade >= N "
        "counts as relevant (trec_eval's -l; e.g. 2 for TREC DL); graded measures (nDCG) are unchanged",
    )(f)


def at_level(names: list[str] | None, rel: int | None) -> list[str] | None:
    """The measure names with ``rel=N`` set on each that takes a relevance level and names none
    (``-l N``); the defaults when none are named."""
    if rel is None:
        return names

    from .._evaluate import DEFAULT_MEASURES
    from .._measures import parse_measures
    from .._measures.grammar import _words

    out: list[str] = []
    for text in names or list(DEFAULT_MEASURES):
        for word in _words(text):
            explicit = re.search(r"\brel\s*=", word) is not None
            for m in parse_measures(word):
                if not explicit and any(p.name == "rel" for p in m.spec.params):
                    m = m(rel=rel)
                out.append(str(m))
    return out
