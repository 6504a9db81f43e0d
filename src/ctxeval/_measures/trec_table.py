"""trec_eval's printing of the measures of :mod:`.trec` and the judgment-group measures (``ctxeval
trec_eval``): how each reads its ``-m`` parameter, computes and summarises (:class:`TrecSpec`)."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._core.evaldata import EvalData
from .._errors import MeasureError
from .base import TrecArgs, TrecSpec, make, register_trec
from .trec_kernels import (
    bing_values,
    eleven_pt_values,
    g_values,
    ideal_dcg_values,
    infap_values,
    iprec_cuts,
    ndcg_rel_values,
    nonrel_judged_ret_values,
    rbp_resid_values,
    rbp_values,
    relative_p_values,
    relstrings,
    rndcg_values,
    rprec_mult_values,
    set_f_values,
    set_map_values,
    set_relative_p_values,
    unj_values,
    utility_values,
    yaap_values,
)
from .trec_support import ELEVEN, with_trec_levels

# --------------------------------------------------------------------------------------------------
# trec_eval's printing of its measures (ctxeval trec_eval): the specs of the measures computed here
# --------------------------------------------------------------------------------------------------

_INT_NAME = re.compile(r"[+-]?\d+")


def _rounding(a: TrecArgs) -> str:
    """How recall levels become counts of relevant docs: lround in 10.0, (long)(p·R + 0.9) in 9.x."""
    return "lround" if a.version >= 10 else "v9"


def trec_gains(pairs: Sequence[tuple[str, float]]) -> dict[int, float] | None:
    """The custom gains of ``-m name.1=3,2=9`` pairs (integer keys; the first per grade wins)."""
    gains: dict[int, float] = {}
    for name, value in pairs:
        if _INT_NAME.fullmatch(name):
            gains.setdefault(int(name), value)
    return gains or None


def trec_p(pairs: Sequence[tuple[str, float]]) -> float:
    """The persistence ``p=`` of rbp's pairs (the last given wins; 0.9 by default)."""
    p = 0.9
    for name, value in pairs:
        if name == "p":
            p = value
    return p


def _utility(d: EvalData, a: TrecArgs, values: list[float]) -> np.ndarray:
    if len(values) != 4:
        raise MeasureError("trec_eval.calc_utility: improper number of coefficients")
    ca, cb, cc, ce = values
    return utility_values(d, a.level, ca, cb, cc, ce, a.n_docs)


def _set_f(d: EvalData, a: TrecArgs, values: list[float]) -> np.ndarray:
    x = values[0]
    return make("SetF", {"rel": a.level}).compute(d) if x == 1.0 else set_f_values(d, a.level, x)


def _gains_measure(name: str) -> Callable[[EvalData, TrecArgs, list[tuple[str, float]]], np.ndarray]:
    def compute(d: EvalData, a: TrecArgs, pairs: list[tuple[str, float]]) -> np.ndarray:
        gains = trec_gains(pairs)
        return make(name, {"gains": gains} if gains else None).compute(d)

    return compute


PairKernel = Callable[[EvalData, TrecArgs, list[tuple[str, float]]], np.ndarray]


def _levels(kernel: PairKernel) -> PairKernel:
    """``kernel`` seeing trec_eval's levels -1 (not in the qrels) and -2 (negative grade) when a gain
    is given for a negative level (``-m ndcg.-1=3``: trec_eval gives every retrieved doc outside the
    qrels that gain). ``evaluate`` keeps its own reading: a gain for grade -1 applies to the docs
    the qrels grade -1."""

    def compute(d: EvalData, a: TrecArgs, pairs: list[tuple[str, float]]) -> np.ndarray:
        gains = trec_gains(pairs)
        return kernel(with_trec_levels(d) if gains and min(gains) < 0 else d, a, pairs)

    return compute


def _at_level(values: Callable[[EvalData, int], np.ndarray]) -> Callable[[EvalData, TrecArgs], np.ndarray]:
    """trec_eval's measure whose values read only the relevance level (-l)."""
    return lambda d, a: values(d, a.level)


def _of_gains(values: Callable[[EvalData, Any], np.ndarray]) -> PairKernel:
    """trec_eval's measure whose values read only the custom gains of its pairs (and, by :func:`_levels`,
    its levels -1 and -2)."""
    return _levels(lambda d, a, pairs: values(d, trec_gains(pairs)))


def _at_recall_levels(values: Callable[..., Any]) -> Callable[[EvalData, TrecArgs, list[float]], Any]:
    """trec_eval's measure at recall levels (its numbers): cut-offs of round(p·R) relevant docs as the
    version rounds them, precision 0/0 where a topic retrieves nothing (``no_docs``)."""
    return lambda d, a, levels: values(d, a.level, levels, _rounding(a), a.no_docs)


def _avgjg(per_group: Callable[[EvalData], np.ndarray]) -> Callable[[EvalData], np.ndarray]:
    """A measure averaged over the judgment groups of each query (trec_eval's ``*_avgjg``)."""
    return lambda d: d.extra("judgment_groups").mean(d.n_queries, per_group)


def _rprec_mult_avgjg(d: EvalData, a: TrecArgs, cuts: list[float]) -> list[np.ndarray]:
    jg = d.extra("judgment_groups")
    return [jg.mean(d.n_queries, functools.partial(rprec_mult_values, rel=a.level, mult=c)) for c in cuts]


_EVERY_SET = ("official", "set", "all_trec", "all_prefs", "prefs", "qrels_jg")
_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)  # trec_eval's cut-offs of relative_P and P_avgjg
_RPREC_MULTS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)

for spec in (
    TrecSpec("runid", 0, "runid", summary="none", sets=_EVERY_SET, rel_format=None),
    TrecSpec("num_q", 1, "num_q", summary="sum", sets=_EVERY_SET, rel_format=None),
    TrecSpec(
        "gm_map",
        6,
        "gm",
        lambda d, a: make("AP", {"rel": a.level}).compute(d),
        summary="gm",
        family="gm_map",
        sets=("official", "all_trec"),
    ),
    TrecSpec(
        "iprec_at_recall",
        10,
        "cut_double",
        _at_recall_levels(iprec_cuts),
        ELEVEN,
        family="IPrec",
        sets=("official", "all_trec"),
    ),
    TrecSpec("relstring", 12, "relstring", lambda d, a, length: relstrings(d, length), (10.0,), summary="none"),
    TrecSpec("infAP", 14, "double", _at_level(infap_values), family="infAP"),
    TrecSpec(
        "gm_bpref", 15, "gm", lambda d, a: make("Bpref", {"rel": a.level}).compute(d), summary="gm", family="gm_bpref"
    ),
    TrecSpec(
        "Rprec_mult",
        16,
        "cut_double",
        lambda d, a, cuts: [rprec_mult_values(d, a.level, c) for c in cuts],
        _RPREC_MULTS,
        family="Rprec_mult",
    ),
    TrecSpec(
        "utility",
        17,
        "p_double",
        _utility,
        (1.0, -1.0, 0.0, 0.0),
        reset_missing=True,
        family="utility",
        sets=("set", "all_trec"),
    ),
    TrecSpec(
        "11pt_avg",
        18,
        "p_double",
        _at_recall_levels(eleven_pt_values),
        ELEVEN,
        family="11pt_avg",
    ),
    TrecSpec("binG", 19, "double", _at_level(bing_values), family="binG"),
    TrecSpec("G", 20, "p_pair", _of_gains(g_values), family="G"),
    TrecSpec("dcg", 21, "p_pair", _levels(_gains_measure("DCG")), versions=(10,), family="DCG", sets=()),
    TrecSpec("ideal_dcg", 22, "p_pair", _of_gains(ideal_dcg_values), versions=(10,), family="ideal_dcg", sets=()),
    TrecSpec("ndcg", 23, "p_pair", _levels(_gains_measure("nDCG")), family="nDCG"),
    TrecSpec("ndcg_rel", 24, "p_pair", _of_gains(ndcg_rel_values), family="ndcg_rel"),
    TrecSpec(
        "Rndcg", 25, "p_pair", _levels(lambda d, a, pairs: rndcg_values(d, a.level, trec_gains(pairs))), family="Rndcg"
    ),
    TrecSpec(
        "relative_P",
        28,
        "cut_long",
        lambda d, a, k: relative_p_values(d, a.level, k),
        _CUTS,
        family="relative_P",
    ),
    TrecSpec(
        "set_relative_P",
        31,
        "double",
        _at_level(set_relative_p_values),
        family="set_relative_P",
        sets=("set", "all_trec"),
    ),
    TrecSpec("set_map", 33, "double", _at_level(set_map_values), family="SetAP", sets=("set", "all_trec")),
    TrecSpec("set_F", 34, "p_double", _set_f, (1.0,), family="SetF", sets=("set", "all_trec")),
    TrecSpec(
        "num_nonrel_judged_ret",
        35,
        "long",
        _at_level(nonrel_judged_ret_values),
        summary="sum",
        family="num_nonrel_judged_ret",
    ),
    TrecSpec("yaap", 36, "double", _at_level(yaap_values), family="yaap", sets=()),
    TrecSpec(
        "rbp",
        37,
        "p_pair",
        _levels(lambda d, a, pairs: rbp_values(d, trec_p(pairs), None, trec_gains(pairs))),
        versions=(10,),
        family="RBP",
    ),
    TrecSpec(
        "rbp_resid",
        38,
        "p_pair",
        lambda d, a, pairs: rbp_resid_values(d, trec_p(pairs)),
        versions=(10,),
        reset_missing=True,
        family="rbp_resid",
    ),
    TrecSpec(
        "unj",
        39,
        "cut_long",
        lambda d, a, k: unj_values(d, k),
        (5, 10, 20),
        versions=(10,),
        reset_missing=True,
        family="unj",
    ),
    # judgment groups (-R qrels_jg): trec_eval's m_map_avgjg.c, m_P_avgjg.c, m_Rprec_mult_avgjg.c
    TrecSpec(
        "map_avgjg",
        112,
        "double",
        lambda d, a: _avgjg(lambda g: make("AP", {"rel": a.level}).compute(g))(d),
        sets=("qrels_jg",),
        rel_format="qrels_jg",
    ),
    TrecSpec(
        "P_avgjg",
        113,
        "cut_long",
        lambda d, a, k: _avgjg(lambda g: make("P", {"rel": a.level}, k).compute(g))(d),
        _CUTS,
        sets=("qrels_jg",),
        rel_format="qrels_jg",
    ),
    TrecSpec(
        "Rprec_mult_avgjg",
        114,
        "cut_double",
        _rprec_mult_avgjg,
        _RPREC_MULTS,
        sets=("qrels_jg",),
        rel_format="qrels_jg",
    ),
):
    register_trec(spec)
