"""Metric@K curves (any measure that takes a cutoff, at every K) and 11-point precision–recall curves.

A curve of a measure family (with its parameters, e.g. ``nDCG`` or ``P(rel=2)``) is the mean over
queries of ``family@k`` for each k in ``ks``; the per-query values come from :func:`ctxeval.evaluate`,
which prepares each run once and evaluates every ``family@k`` on it, so a curve costs one evaluation
with ``len(ks)`` measures per family. The interpolated precision–recall curve of a run is the mean of
``IPrec@r`` (trec_eval's ``iprec_at_recall``) at the recall levels r = 0.0, 0.1, ..., 1.0.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

from ._errors import ConfigError, MeasureError
from ._evaluate import Result, aggregate, evaluate
from ._json import num as _num
from ._measures import Measure, make, parse_measure
from ._show import html_table, pandas, pyplot, short

__all__ = [
    "RECALL_LEVELS",
    "Curves",
    "curve_family",
    "curve_measures",
    "curves_from_result",
    "metric_at_k",
    "parse_axis",
    "parse_ks",
    "pr_from_result",
    "pr_measures",
]

RECALL_LEVELS = tuple(i / 10 for i in range(11))
MAX_K = 100_000  #: the largest cutoff of a curve
MAX_POINTS = 1_000  #: the most cutoffs one curve computes (each is a full evaluation of every query)


def parse_ks(spec: str | int | Iterable[int]) -> list[int]:
    """The cutoffs of a curve: ``"1:50"`` (1 to 50), ``"1:50:5"`` (1, 6, ..., 46), ``"1,5,10"``, ``"20"``
    (1 to 20), an int K (1 to K) or an iterable of ints. Sorted, without repeats.

    >>> parse_ks("1:5"), parse_ks("2:10:4"), parse_ks("10,1,5,5"), parse_ks(3)
    ([1, 2, 3, 4, 5], [2, 6, 10], [1, 5, 10], [1, 2, 3])
    """
    if isinstance(spec, bool):
        raise ConfigError(f"cutoffs must be a whole number, a range like 1:50 or a list like 1,5,10, got {spec!r}")
    if isinstance(spec, int):
        _check_range(1, spec, 1, str(spec))
        ks = list(range(1, spec + 1))
    elif isinstance(spec, str):
        text = spec.strip()
        span = None
        try:
            if re.fullmatch(r"\d+", text):
                span = (1, int(text), 1)
            elif re.fullmatch(r"\d+:\d+(:\d+)?", text):
                parts = [int(p) for p in text.split(":")]
                step = parts[2] if len(parts) == 3 else 1
                if step < 1:
                    raise ValueError("step must be >= 1")
                span = (parts[0], parts[1], step)
            elif re.fullmatch(r"\d+(\s*,\s*\d+)*", text):
                ks = [int(p) for p in text.split(",")]
            else:
                raise ValueError("not a cutoff list")
        except ValueError:
            raise ConfigError(
                f"cutoffs must look like 1:50, 1:50:5, 1,5,10 or 20 (meaning 1:20), got {spec!r}"
            ) from None
        if span is not None:
            _check_range(*span, text)
            ks = list(range(span[0], span[1] + 1, span[2]))
    else:
        ks = []
        for k in spec:
            if isinstance(k, bool) or not isinstance(k, int):
                raise ConfigError(f"cutoffs must be whole numbers, got {k!r}")
            ks.append(k)
    ks = sorted(set(ks))
    if not ks:
        raise ConfigError(f"no cutoffs in {spec!r}")
    if ks[0] < 1 or ks[-1] > MAX_K:
        raise ConfigError(f"cutoffs must lie in 1..{MAX_K}, got {ks[0] if ks[0] < 1 else ks[-1]}")
    if len(ks) > MAX_POINTS:
        raise ConfigError(
            f"{len(ks)} cutoffs is more than a curve needs (at most {MAX_POINTS}); give a step, e.g. 1:{ks[-1]}:{-(-ks[-1] // MAX_POINTS)}"
        )
    return ks


def _check_range(lo: int, hi: int, step: int, text: str) -> None:
    """A range's bounds and size checked before it is built."""
    if hi > MAX_K:
        raise ConfigError(f"cutoffs must lie in 1..{MAX_K}, got {hi} (in {text!r})")
    n = max(0, (hi - lo) // step + 1)
    if n > MAX_POINTS:
        raise ConfigError(
            f"{text!r} gives {n} cutoffs, more than a curve needs (at most {MAX_POINTS}); "
            f"give a step, e.g. {lo}:{hi}:{-(-(hi - lo + 1) // MAX_POINTS)}"
        )


def curve_family(name: str | Measure) -> str:
    """The canonical label of a curve: the measure's family and parameters, without cutoff.

    ``nDCG@10``, ``nDCG`` and ``ndcg_cut.10`` all give ``nDCG``; ``P(rel=2)@5`` gives ``P(rel=2)``.
    A family without an integer cutoff (``Rprec``, ``IPrec``) has no curve over K.

    >>> curve_family("ndcg_cut.10"), curve_family("P(rel=2)"), curve_family("RA-nWG(alpha=0.5)@5")
    ('nDCG', 'P(rel=2)', 'RA-nWG(alpha=0.5)')
    """
    if isinstance(name, Measure):
        m = name
    else:
        text = str(name).strip()
        try:
            m = parse_measure(text)
        except MeasureError as exc:
            if "needs a cutoff" not in str(exc):
                raise
            m = parse_measure(text + "@1")
    spec = m.spec
    if spec.cutoff == "none" or spec.cutoff_kind != "int":
        raise MeasureError(f"{spec.name} takes no whole-number cutoff @K, so it has no curve over K")
    base = make(m.family, dict(m.params), 1)
    label = str(base)
    return label[: -len("@1")]


def curve_measures(
    families: Sequence[str | Measure], ks: Sequence[int], tokens: bool = False
) -> dict[str, list[Measure]]:
    """For each curve label, ``family@k`` for every k (``tokens``: ``family@ktok``, a budget of k tokens)."""
    out: dict[str, list[Measure]] = {}
    for f in families:
        label = curve_family(f)
        if label in out:
            continue
        base = parse_measure(label + "@1")
        out[label] = [make(base.family, dict(base.params), None if tokens else k, k if tokens else None) for k in ks]
    return out


def parse_axis(spec: str | int | Iterable[int]) -> tuple[list[int], bool]:
    """The points of a curve and whether they are budgets of tokens: cutoffs as :func:`parse_ks` reads
    them, or the same forms ending in ``tok`` (``"256:4096:256tok"``, ``"512,1024,2048tok"``).

    >>> parse_axis("256:1024:256tok"), parse_axis("1:3")
    (([256, 512, 768, 1024], True), ([1, 2, 3], False))
    """
    if isinstance(spec, str) and spec.strip().endswith("tok"):
        return parse_ks(spec.strip()[: -len("tok")]), True
    return parse_ks(spec), False


def curves_from_result(result: Result, curves: dict[str, list[Measure]], ks: Sequence[int]) -> dict[str, Any]:
    """``{"ks": [...], "series": [{"run", "measure", "values"}]}`` from an evaluation that holds every
    measure of ``curves`` (series ordered by run, then by curve)."""
    series = []
    for r in result.runs:
        for label, ms in curves.items():
            series.append({"run": r.name, "measure": label, "values": [_num(aggregate(m, r.values[m])[0]) for m in ms]})
    return {"ks": list(ks), "series": series}


class Curves(dict[str, Any]):
    """What :func:`metric_at_k` returns: the dict ``{"ks", "series": [{"run", "measure", "values"}],
    "settings"}`` (as ``ctxeval curve --format json`` prints it), with a short ``repr``, an HTML table in
    a notebook, :meth:`to_pandas` and :meth:`plot`."""

    def __repr__(self) -> str:
        runs = short(list(dict.fromkeys(str(x["run"]) for x in self["series"])))
        ms = short(list(dict.fromkeys(str(x["measure"]) for x in self["series"])))
        ks = self["ks"]
        unit = "B" if self.get("axis") == "tokens" else "K"
        span = f"{unit} = {ks[0]}..{ks[-1]}" if ks else f"no {unit}"
        return f"Curves({ms} over {span}; runs: {runs})"

    def _repr_html_(self) -> str:
        ks = self["ks"]
        rows = [[x["run"], x["measure"], *x["values"]] for x in self["series"]]
        return html_table(["run", "measure", *(f"@{k}" for k in ks)], rows, "mean over queries at each K")

    def to_pandas(self) -> Any:
        """One row per (run, measure, k): ``run, measure, k, value`` (NaN where undefined)."""
        pd = pandas("Curves.to_pandas")
        rows = [
            (x["run"], x["measure"], k, math.nan if v is None else v)
            for x in self["series"]
            for k, v in zip(self["ks"], x["values"])
        ]
        return pd.DataFrame(rows, columns=["run", "measure", "k", "value"])

    def plot(self, measure: str | None = None, ax: Any = None) -> Any:
        """Each run's curve of ``measure`` (default: the first) against K, on matplotlib ``ax`` (default:
        a new figure). Returns the axes. Needs the ``report`` extra (matplotlib)."""
        plt = pyplot("Curves.plot")
        names = list(dict.fromkeys(x["measure"] for x in self["series"]))
        if not names:
            raise ConfigError("no curves to plot")
        name = names[0] if measure is None else measure
        if name not in names:
            raise ConfigError(f"no curve of {name!r}; the curves: {', '.join(names)}")
        if ax is None:
            _, ax = plt.subplots()
        for x in self["series"]:
            if x["measure"] == name:
                ax.plot(self["ks"], [math.nan if v is None else v for v in x["values"]], marker=".", label=x["run"])
        tokens = self.get("axis") == "tokens"
        ax.set_xlabel("budget (tokens)" if tokens else "K")
        ax.set_ylabel(f"{name}@Btok" if tokens else f"{name}@K")
        ax.legend()
        return ax


def metric_at_k(
    qrels: Any = None,
    runs: Any = None,
    measures: Sequence[str | Measure] | str = ("nDCG",),
    k: str | int | Iterable[int] = 20,
    *,
    samples: Any = None,
    policies: Any = None,
    rag: Any = None,
    utility: Any = None,
    engine: Any = "local",
    measure_families: Sequence[str | Measure] | str | None = None,
    ks: str | int | Iterable[int] | None = None,
) -> Curves:
    """Every measure family in ``measures`` at every cutoff in ``k``, averaged over queries, for each run;
    ``k`` ending in ``tok`` (``"256:4096:256tok"``) gives the curve over budgets of tokens instead
    (``family@Btok`` at each B, with a chunk table in ``rag``: see :func:`ctxeval.evaluate`).

    ``measures``: families (``nDCG``, ``P(rel=2)``; a cutoff given is replaced); ``k``: the cutoffs
    (``"1:20"``, ``"1,5,10"``, a number or numbers). ``policies``, ``rag``, ``utility``, ``samples``
    (sample sets instead of ``qrels`` and ``runs``) and ``engine`` (local, stream or spark) are as for
    :func:`ctxeval.evaluate`. Returns ``{"ks", "series": [{"run", "measure", "values"}], "settings"}``,
    the values in the order of the cutoffs (``None`` where the measure is undefined for every query).
    ``measure_families`` and ``ks`` are the former names of ``measures`` and ``k`` (deprecated).

    >>> qrels = {"q1": {"a": 1, "b": 1}}
    >>> run = {"q1": {"a": 0.9, "x": 0.8, "b": 0.7}}
    >>> metric_at_k(qrels, run, ["P", "R"], "1:3")["series"][1]["values"]
    [0.5, 0.5, 1.0]
    """
    if measure_families is not None or ks is not None:
        warnings.warn(
            "metric_at_k: measure_families= and ks= are now measures= and k=, as every verb names them",
            DeprecationWarning,
            stacklevel=2,
        )
        measures = measure_families if measure_families is not None else measures
        k = ks if ks is not None else k
    fams = [measures] if isinstance(measures, (str, Measure)) else list(measures)
    if not fams:
        raise ConfigError("metric_at_k needs at least one measure family")
    k_list, tokens = parse_axis(k)
    curves = curve_measures(fams, k_list, tokens)
    ms = [m for ms in curves.values() for m in ms]
    result = evaluate(qrels, runs, ms, samples=samples, policies=policies, rag=rag, utility=utility, engine=engine)
    out = Curves(curves_from_result(result, curves, k_list))
    if tokens:
        out["axis"] = "tokens"  # the points are budgets of tokens (the settings name the tokenizer)
    out["settings"] = result.settings
    return out


def pr_measures(rel: int = 1) -> list[Measure]:
    """``IPrec(rel=...)@r`` at the 11 recall levels."""
    return [make("IPrec", {"rel": rel}, r) for r in RECALL_LEVELS]


def pr_from_result(result: Result, rel: int = 1) -> dict[str, Any]:
    """``{"recall": [0.0, ..., 1.0], "series": [{"run", "precision": [11 means]}]}``."""
    ms = pr_measures(rel)
    return {
        "recall": list(RECALL_LEVELS),
        "series": [{"run": r.name, "precision": [_num(aggregate(m, r.values[m])[0]) for m in ms]} for r in result.runs],
    }
