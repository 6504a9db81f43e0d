"""A drop-in for the ``trec_eval`` program (10.0, or 9.0.x with ``version=9``): same measure names and
parameters, same query rules, same output, byte for byte.

What trec_eval does, and what this reproduces:

* **Input.** Qrels ``qid iter docno rel`` and results ``qid iter docno rank sim runid`` (the rank is
  ignored). Docs are ranked by ``sim`` as a C float, descending, ties by docno descending; ``-M``
  keeps the first N of each topic after ranking; ``-J`` then drops the docs not judged (>= 0).
  Duplicate docs in a topic are an error. The runid is the last line's.
* **Queries.** Topics of the results without judgments are ignored. Judged topics without results
  are left out, unless ``-c``: then 10.0 evaluates them against a one-document "bogus" ranking (so
  every measure scores what an empty ranking scores; ``num_ret``, ``utility``, ``unj``, ``rbp_resid``
  and ``relstring`` are reset to nothing) and prints them with ``-q``; 9.x instead adds them as
  zeros to every average without printing them. With ``-c`` the summary ``num_rel`` counts every
  judgment with rel > 0 in the qrels (trec_eval's ``te_calc_avg_num_rel``), and ``gm_*`` use the
  floor 0.00001 for the missing topics.
* **Summary.** Averages are sums in topic order divided by the number of topics; ``num_*`` are sums;
  ``gm_map`` / ``gm_bpref`` are ``exp(Σ log(max(v, 0.00001)) / n)``.
* **Output.** ``%-22s\\t%s\\t%6.4f`` (``%ld`` for counts), measures in trec_eval's fixed order, the
  ``-q`` lines topic by topic, then ``all``.

Not reproduced: trec_eval 10.0 without ``-c`` reuses the previous topic's ranking for a judged topic
that has no results (a bug, trec_eval issue #46); here such topics are simply left out, as in 9.x.
"""

from __future__ import annotations

import math
import os
import re
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from ._lazy import pl  # polars, imported on first use

from . import _io
from ._data import Qrels, Run
from ._engine import EvalData, prepare
from ._errors import ConfigError, MeasureError, QueryMismatchError
from ._measures import _trec as T
from ._measures._base import make

__all__ = ["trec_eval", "TrecMeasure", "MEASURES", "nicknames"]

# --------------------------------------------------------------------------------------------------
# measure table
# --------------------------------------------------------------------------------------------------

LONG_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


@dataclass(frozen=True)
class TrecMeasure:
    """One trec_eval measure: how its parameters are read, printed and summarised."""

    name: str
    kind: str  # "runid" | "num_q" | "long" | "double" | "gm" | "cut_long" | "cut_double" | "p_double" | "p_pair" | "relstring"
    default: tuple[Any, ...] = ()
    summary: str = "mean"  # "mean" | "sum" | "gm" | "none"
    versions: tuple[int, ...] = (9, 10)


MEASURES: tuple[TrecMeasure, ...] = (
    TrecMeasure("runid", "runid", summary="none"),
    TrecMeasure("num_q", "num_q", summary="sum"),
    TrecMeasure("num_ret", "long", summary="sum"),
    TrecMeasure("num_rel", "long", summary="sum"),
    TrecMeasure("num_rel_ret", "long", summary="sum"),
    TrecMeasure("map", "double"),
    TrecMeasure("gm_map", "gm", summary="gm"),
    TrecMeasure("Rprec", "double"),
    TrecMeasure("bpref", "double"),
    TrecMeasure("recip_rank", "double"),
    TrecMeasure("iprec_at_recall", "cut_double", T.ELEVEN),
    TrecMeasure("P", "cut_long", LONG_CUTS),
    TrecMeasure("relstring", "relstring", (10.0,), summary="none"),
    TrecMeasure("recall", "cut_long", LONG_CUTS),
    TrecMeasure("infAP", "double"),
    TrecMeasure("gm_bpref", "gm", summary="gm"),
    TrecMeasure("Rprec_mult", "cut_double", (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)),
    TrecMeasure("utility", "p_double", (1.0, -1.0, 0.0, 0.0)),
    TrecMeasure("11pt_avg", "p_double", T.ELEVEN),
    TrecMeasure("binG", "double"),
    TrecMeasure("G", "p_pair"),
    TrecMeasure("dcg", "p_pair", versions=(10,)),
    TrecMeasure("ideal_dcg", "p_pair", versions=(10,)),
    TrecMeasure("ndcg", "p_pair"),
    TrecMeasure("ndcg_rel", "p_pair"),
    TrecMeasure("Rndcg", "p_pair"),
    TrecMeasure("ndcg_cut", "cut_long", LONG_CUTS),
    TrecMeasure("map_cut", "cut_long", LONG_CUTS),
    TrecMeasure("relative_P", "cut_long", LONG_CUTS),
    TrecMeasure("success", "cut_long", (1, 5, 10)),
    TrecMeasure("set_P", "double"),
    TrecMeasure("set_relative_P", "double"),
    TrecMeasure("set_recall", "double"),
    TrecMeasure("set_map", "double"),
    TrecMeasure("set_F", "p_double", (1.0,)),
    TrecMeasure("num_nonrel_judged_ret", "long", summary="sum"),
    TrecMeasure("yaap", "double"),
    TrecMeasure("rbp", "p_pair", versions=(10,)),
    TrecMeasure("rbp_resid", "p_pair", versions=(10,)),
    TrecMeasure("unj", "cut_long", (5, 10, 20), versions=(10,)),
)

_OFFICIAL = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P")
_ALL_TREC_9 = _OFFICIAL + (
    "relstring", "recall", "infAP", "gm_bpref", "utility", "11pt_avg", "ndcg", "relative_P", "Rprec_mult",
    "success", "map_cut", "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G", "set_P", "set_recall",
    "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret",
)  # fmt: skip
_ALL_TREC_10 = _ALL_TREC_9 + ("unj", "rbp", "rbp_resid")
_SET = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall", "set_relative_P", "set_map", "set_F")
_UNSUPPORTED = ("all_prefs", "prefs", "qrels_jg")


def nicknames(version: int) -> dict[str, tuple[str, ...]]:
    """trec_eval's measure nicknames (measures.c) for a version."""
    return {"official": _OFFICIAL, "set": _SET, "all_trec": _ALL_TREC_10 if version >= 10 else _ALL_TREC_9}


def _table(version: int) -> dict[str, TrecMeasure]:
    return {m.name: m for m in MEASURES if version in m.versions}


# --------------------------------------------------------------------------------------------------
# -m parsing (C atol / atof semantics)
# --------------------------------------------------------------------------------------------------

_ATOL = re.compile(r"[ \t\n\v\f\r]*([+-]?\d+)")
_ATOF = re.compile(
    r"[ \t\n\v\f\r]*([+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan))", re.IGNORECASE
)


def _atol(text: str) -> int:
    m = _ATOL.match(text)
    return int(m.group(1)) if m else 0


def _atof(text: str) -> float:
    m = _ATOF.match(text)
    return float(m.group(1)) if m else 0.0


@dataclass
class _Selection:
    marked: set[str] = field(default_factory=set)
    params: dict[str, str] = field(default_factory=dict)  # first "-m name.params" per name wins


def _select(args: Sequence[str], version: int) -> _Selection:
    table = _table(version)
    names = nicknames(version)
    sel = _Selection()
    for arg in list(args) or ["official"]:
        name, dot, param = arg.partition(".")
        if dot:
            if not param:
                raise MeasureError(f"trec_eval: improper measure in parameter '{name}'")
            sel.params.setdefault(name, param)
        if name in names:
            sel.marked.update(names[name])
        elif name in table:
            sel.marked.add(name)
        elif name in _UNSUPPORTED:
            raise MeasureError(f"trec_eval: measure set '{name}' needs preference judgments, which ctxeval does not read")
        else:
            raise MeasureError(f"trec_eval: illegal measure '{arg}'")
    return sel


def _long_cutoffs(text: str) -> list[int]:
    cuts = sorted(_atol(t) for t in text.split(","))
    if cuts[0] <= 0:
        raise MeasureError("trec_eval: Negative cutoff detected")
    if any(a == b for a, b in zip(cuts, cuts[1:])):
        raise MeasureError("trec_eval: duplicate cutoffs detected")
    return cuts


def _double_cutoffs(text: str) -> list[float]:
    cuts = sorted(_atof(t) for t in text.split(","))
    if any(a == b for a, b in zip(cuts, cuts[1:])):
        raise MeasureError("trec_eval: duplicate cutoffs detected")
    return cuts


def _pairs(text: str) -> list[tuple[str, float]]:
    last = ","
    for ch in text:
        if ch == ",":
            if last == ",":
                break
            last = ","
        elif ch == "=":
            if last == "=":
                last = ","
                break
            last = "="
    if last != "=":
        raise MeasureError(f"trec_eval: malformed pair parameters in '{text}'")
    out = []
    for item in text.split(","):
        name, _, value = item.partition("=")
        out.append((name, _atof(value)))
    return out


_INT_NAME = re.compile(r"[+-]?\d+")


def _gains(pairs: Sequence[tuple[str, float]]) -> dict[int, float] | None:
    gains: dict[int, float] = {}
    for name, value in pairs:
        if _INT_NAME.fullmatch(name):
            gains.setdefault(int(name), value)
    return gains or None


def _p_of(pairs: Sequence[tuple[str, float]]) -> float:
    p = 0.9
    for name, value in pairs:
        if name == "p":
            p = value
    return p


def _fmt_cut(x: float) -> str:
    return "%3.2f" % x


# --------------------------------------------------------------------------------------------------
# evaluation
# --------------------------------------------------------------------------------------------------


@dataclass
class _Column:
    """One printed measure name with its per-topic values."""

    name: str
    values: np.ndarray | list[str]
    fmt: str  # "double" | "long" | "str"
    summary: str  # "mean" | "sum" | "gm" | "none"
    per_query: bool = True
    reset_missing: bool = False  # 10.0 -c: value of a topic without results is forced to 0


def _measure(name: str, params: dict[str, Any] | None = None, cutoff: int | float | None = None) -> Callable[[EvalData], np.ndarray]:
    m = make(name, params or {}, cutoff)
    return m.compute


def _columns(spec: TrecMeasure, param: str | None, d: EvalData, level: int, version: int, n_docs: int) -> list[_Column]:
    L = level
    rel = {"rel": L}
    name = spec.name
    kind = spec.kind
    if kind == "cut_long":
        cuts = _long_cutoffs(param) if param else list(spec.default)
        fn: dict[str, Callable[[int], np.ndarray]] = {
            "P": lambda k: _measure("P", rel, k)(d),
            "recall": lambda k: _measure("R", rel, k)(d),
            "ndcg_cut": lambda k: _measure("nDCG", None, k)(d),
            "map_cut": lambda k: _measure("AP", rel, k)(d),
            "relative_P": lambda k: T.relative_p_values(d, L, k),
            "success": lambda k: _measure("Success", rel, k)(d),
            "unj": lambda k: T.unj_values(d, k),
        }
        return [_Column(f"{name}_{k}", fn[name](k), "double", "mean", reset_missing=name == "unj") for k in cuts]
    if kind == "cut_double":
        cuts_d = _double_cutoffs(param) if param else list(spec.default)
        names = [(name + "_" + _fmt_cut(c))[: len(name) + 9] for c in cuts_d]
        if name == "iprec_at_recall":
            vals = T.iprec_cuts(d, L, cuts_d, "lround" if version >= 10 else "v9")
        else:
            vals = [T.rprec_mult_values(d, L, c) for c in cuts_d]
        return [_Column(n, v, "double", "mean") for n, v in zip(names, vals)]
    if kind in ("p_double", "relstring"):
        values = [_atof(t) for t in param.split(",")] if param else list(spec.default)
        shown = f"{name}_{param}" if param else name
        if name == "relstring":
            length = int(values[0]) if math.isfinite(values[0]) else 0
            return [_Column(shown, T.relstrings(d, length), "str", "none")]
        if name == "utility":
            if len(values) != 4:
                raise MeasureError("trec_eval.calc_utility: improper number of coefficients")
            a, b, c, e = values
            return [_Column(shown, T.utility_values(d, L, a, b, c, e, n_docs), "double", "mean", reset_missing=True)]
        if name == "11pt_avg":
            return [_Column(shown, T.eleven_pt_values(d, L, values), "double", "mean")]
        x = values[0]  # set_F
        vals_f = _measure("SetF", rel)(d) if x == 1.0 else T.set_f_values(d, L, x)
        return [_Column(shown, vals_f, "double", "mean")]
    if kind == "p_pair":
        pairs = _pairs(param) if param else []
        gains = _gains(pairs)
        shown = f"{name}_{param}" if param else name
        g = {"gains": gains} if gains else {}
        compute: dict[str, Callable[[], np.ndarray]] = {
            "G": lambda: T.g_values(d, gains),
            "dcg": lambda: _measure("DCG", g)(d),
            "ideal_dcg": lambda: T.ideal_dcg_values(d, gains),
            "ndcg": lambda: _measure("nDCG", g)(d),
            "ndcg_rel": lambda: T.ndcg_rel_values(d, gains),
            "Rndcg": lambda: T.rndcg_values(d, L, gains),
            "rbp": lambda: T.rbp_values(d, _p_of(pairs), None, gains),
            "rbp_resid": lambda: T.rbp_resid_values(d, _p_of(pairs)),
        }
        return [_Column(shown, compute[name](), "double", "mean", reset_missing=name == "rbp_resid")]
    if kind == "gm":
        src = "AP" if name == "gm_map" else "Bpref"
        return [_Column(name, _measure(src, rel)(d), "double", "gm", per_query=False)]
    simple: dict[str, Callable[[], np.ndarray]] = {
        "num_ret": lambda: np.asarray(d.n_ret, dtype=np.float64),
        "num_rel": lambda: _measure("NumRel", rel)(d),
        "num_rel_ret": lambda: _measure("NumRelRet", rel)(d),
        "num_nonrel_judged_ret": lambda: T.nonrel_judged_ret_values(d, L),
        "map": lambda: _measure("AP", rel)(d),
        "Rprec": lambda: _measure("Rprec", rel)(d),
        "bpref": lambda: _measure("Bpref", rel)(d),
        "recip_rank": lambda: _measure("RR", rel)(d),
        "infAP": lambda: T.infap_values(d, L),
        "binG": lambda: T.bing_values(d, L),
        "set_P": lambda: _measure("SetP", rel)(d),
        "set_relative_P": lambda: T.set_relative_p_values(d, L),
        "set_recall": lambda: _measure("SetR", rel)(d),
        "set_map": lambda: T.set_map_values(d, L),
        "yaap": lambda: T.yaap_values(d, L),
    }
    fmt = "long" if kind == "long" else "double"
    return [_Column(name, simple[name](), fmt, spec.summary)]


def _fmt(value: float, fmt: str) -> str:
    if fmt == "long":
        if not math.isfinite(value):
            return "-9223372036854775808"
        return str(int(value))
    if math.isnan(value):
        return "%6s" % "-nan"
    return "%6.4f" % value


def _seq_total(values: np.ndarray) -> float:
    """Sum in order, one addition at a time (as trec_eval accumulates)."""
    total = 0.0
    for v in values.tolist():
        total += v
    return total


# --------------------------------------------------------------------------------------------------
# input
# --------------------------------------------------------------------------------------------------


def _read_run(path: str) -> tuple[pl.DataFrame, str, str]:
    if path == "-":
        data = sys.stdin.buffer.read()
        with tempfile.TemporaryDirectory() as tmp:
            tmp_path = Path(tmp) / "stdin.run"
            tmp_path.write_bytes(data)
            df = _io.read_file(tmp_path, "run", "trec")
        source = "<stdin>"
        locate = None
    else:
        df = _io.read_file(path, "run", "trec")
        source = str(path)
        locate = lambda q, doc: _io.locate_in_trec(path, q, doc)  # noqa: E731
    runid = str(df["tag"][-1]) if "tag" in df.columns and df.height else ""
    df, _ = _io.resolve_duplicates(df, "run", source, "error", locate)
    return df.select("query_id", "doc_id", "score"), runid, source


def _truncate(run: Run, max_docs: int | None, judged_only: bool, qrels: Qrels) -> Run:
    if max_docs is None and not judged_only:
        return run
    from ._engine import ranked_frame

    df = ranked_frame(run.frame, "trec")
    if max_docs is not None:
        df = df.filter(pl.int_range(pl.len()).over("query_id") < max(int(max_docs), 0))
    if judged_only:
        judged = qrels.frame.filter(pl.col("relevance") >= 0).select("query_id", "doc_id")
        df = df.join(judged, on=["query_id", "doc_id"], how="semi", maintain_order="left")
    return Run(df, run.name, run.source)


# --------------------------------------------------------------------------------------------------
# the program
# --------------------------------------------------------------------------------------------------


def trec_eval(
    qrels: str | os.PathLike[str],
    results: str | os.PathLike[str],
    measures: Sequence[str] = (),
    *,
    query: bool = False,
    complete: bool = False,
    level: int = 1,
    max_docs: int | None = None,
    summary: bool = True,
    judged_only: bool = False,
    n_docs: int = 0,
    version: int = 10,
) -> str:
    """Evaluate like ``trec_eval [-q] [-c] [-n] [-J] [-l L] [-M N] [-N D] {-m measure}* qrels results``
    and return what it prints."""
    if version not in (9, 10):
        raise ConfigError(f"trec_eval version must be 9 or 10, got {version!r}")
    if max_docs is not None and max_docs < 0:
        raise ConfigError(f"-M must be a non-negative number of docs, got {max_docs}")
    sel = _select(measures, version)
    qr = Qrels.from_file(qrels, format="trec")
    run_df, runid, source = _read_run(os.fspath(results))
    run = _truncate(Run(run_df, runid or "run", source), max_docs, judged_only, qr)
    data = prepare(qr, run, ties="trec", missing="zero" if complete else "ignore", keep_frame=False)
    if data.n_queries == 0 or (not complete and data.accounting.evaluated == 0):
        raise QueryMismatchError("trec_eval: No queries with both results and relevance info")
    missing = ~np.asarray(data.has_run, dtype=bool)
    n_all = data.n_queries

    columns: list[tuple[TrecMeasure, list[_Column]]] = []
    for spec in MEASURES:
        if version not in spec.versions or spec.name not in sel.marked:
            continue
        if spec.kind in ("runid", "num_q"):
            columns.append((spec, []))
            continue
        cols = _columns(spec, sel.params.get(spec.name), data, level, version, n_docs)
        for col in cols:
            if complete and missing.any() and isinstance(col.values, np.ndarray):
                vals = np.array(col.values, dtype=np.float64)
                if version < 10:
                    # 9.x: missing topics are not evaluated, they add 0 to the sums
                    vals[missing] = 0.0
                elif col.reset_missing:
                    vals[missing] = 0.0
                col.values = vals
        columns.append((spec, cols))

    lines: list[str] = []
    if query:
        printed = np.flatnonzero(~missing) if version < 10 else np.arange(n_all)
        for qi in printed.tolist():
            qid = data.qids[qi]
            for _spec, cols in columns:
                for col in cols:
                    if not col.per_query:
                        continue
                    if col.fmt == "str":
                        lines.append("%-22s\t%s\t'%s'" % (col.name, qid, col.values[qi]))
                    else:
                        lines.append("%-22s\t%s\t%s" % (col.name, qid, _fmt(float(col.values[qi]), col.fmt)))  # type: ignore[arg-type]
    if summary:
        n_eval = n_all if (version >= 10 or not complete) else int((~missing).sum())
        divisor = n_all
        for spec, cols in columns:
            if spec.kind == "runid":
                lines.append("%-22s\t%s\t%s" % ("runid", "all", runid))
                continue
            if spec.kind == "num_q":
                lines.append("%-22s\t%s\t%d" % ("num_q", "all", n_all))
                continue
            for col in cols:
                if col.summary == "none":
                    continue
                vals = np.asarray(col.values, dtype=np.float64)
                if col.summary == "sum":
                    if spec.name == "num_rel" and complete:
                        total = float(int((qr.frame["relevance"] > 0).sum()))
                    else:
                        total = _seq_total(vals)
                    lines.append("%-22s\t%s\t%s" % (col.name, "all", _fmt(total, "long")))
                elif col.summary == "gm":
                    use = vals if version >= 10 else vals[~missing]
                    logs = np.array([math.log(max(v, T.MIN_GEO_MEAN)) for v in use.tolist()])
                    total = _seq_total(logs)
                    if version < 10 and complete:
                        total += (n_all - n_eval) * math.log(T.MIN_GEO_MEAN)
                    value = math.exp(total / divisor) if divisor > 0 else 0.0
                    lines.append("%-22s\t%s\t%s" % (col.name, "all", _fmt(value, "double")))
                else:
                    total = _seq_total(vals)
                    value = total / divisor if divisor else total
                    lines.append("%-22s\t%s\t%s" % (col.name, "all", _fmt(value, "double")))
    return "".join(line + "\n" for line in lines)
