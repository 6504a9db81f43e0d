"""trec_eval's measures in the registry: the families, their parameters and aliases (the kernels are
in ``trec_kernels``; how ``ctxeval trec_eval`` prints them, in ``trec_table``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._core.evaldata import EvalData
from .base import Family, Kernel, Measure, Param, add_alias, add_trec_param, make, register
from .classical import ROUNDING
from .judged import with_judged_only
from .trec_kernels import (
    bing_values,
    eleven_pt_values,
    g_values,
    ideal_dcg_values,
    infap_values,
    ndcg_rel_values,
    nonrel_judged_ret_values,
    rbp_resid_values,
    rbp_values,
    relative_p_values,
    rndcg_values,
    rprec_mult_values,
    set_map_values,
    set_relative_p_values,
    unj_values,
    utility_values,
    yaap_values,
)

TREC = "trec_eval 10.0 (NIST), https://github.com/usnistgov/trec_eval"
REL = Param("rel", "int", 1, "minimum grade counted as relevant (inclusive)", lo=0)
GAINS = Param(
    "gains", "gains", None, "custom gain per grade, e.g. {0:0,1:1,2:3,3:7}; unlisted grades keep the grade as gain"
)


# --------------------------------------------------------------------------------------------------
# registry
# --------------------------------------------------------------------------------------------------


def _k_gm_map(d: EvalData, m: Measure) -> np.ndarray:
    return make("AP", {"rel": m["rel"]}).compute(d)


def _k_gm_bpref(d: EvalData, m: Measure) -> np.ndarray:
    return make("Bpref", {"rel": m["rel"]}).compute(d)


def _k_rprec_mult(d: EvalData, m: Measure) -> np.ndarray:
    return rprec_mult_values(d, m["rel"], m["mult"])


def _k_utility(d: EvalData, m: Measure) -> np.ndarray:
    return utility_values(d, m["rel"], m["a"], m["b"], m["c"], m["d"], m["n_docs"])


def _k_11pt(d: EvalData, m: Measure) -> np.ndarray:
    return eleven_pt_values(d, m["rel"], rounding=m["rounding"])


def _k_rndcg(d: EvalData, m: Measure) -> np.ndarray:
    return rndcg_values(d, m["rel"], m["gains"])


def _k_relative_p(d: EvalData, m: Measure) -> np.ndarray:
    return relative_p_values(d, m["rel"], m.k)


def _k_rbp(d: EvalData, m: Measure) -> np.ndarray:
    return rbp_values(d, m["p"], m["rel"], m["gains"], None if m.cutoff is None else m.k)


def _k_rbp_resid(d: EvalData, m: Measure) -> np.ndarray:
    return rbp_resid_values(d, m["p"])


def _k_unj(d: EvalData, m: Measure) -> np.ndarray:
    return unj_values(d, m.k)


_P = Param(
    "p",
    "float",
    0.8,
    "persistence: the probability of reading on to the next rank, 0 < p < 1",
    lo=0.0,
    hi=1.0,
    lo_open=True,
    hi_open=True,
)
_P_RESID = Param("p", "float", 0.9, "persistence, 0 < p < 1", lo=0.0, hi=1.0, lo_open=True, hi_open=True)
_BIN_REL = Param(
    "rel", "int", None, "binary gain (grade >= rel); none = trec_eval's graded gain rescaled to [0, 1]", lo=0
)
_Values = Callable[[EvalData, Any], np.ndarray]  #: per-query values of one parameter
G_T = "trec_eval 10.0 (NIST); experimental measure of Chris Buckley, 2008"


def _trec(
    name: str,
    summary: str,
    formula: str,
    citation: str,
    kernel: Kernel,
    params: tuple[Param, ...],
    *,
    cutoff: str = "none",
    judged_only: bool = False,
    **more: Any,
) -> Family:
    """A family of trec_eval's own (the group ``trec_eval``): of the whole ranking unless it takes a cutoff;
    ``judged_only``: it takes that parameter too."""
    family = Family(name, summary, formula, citation, kernel, params, cutoff=cutoff, group="trec_eval", **more)
    return with_judged_only(family) if judged_only else family


def _at_rel(name: str, summary: str, formula: str, citation: str, values: _Values, **more: Any) -> Family:
    """A family of trec_eval's whose values read only the relevance level ``rel``."""
    return _trec(name, summary, formula, citation, lambda d, m: values(d, m["rel"]), (REL,), **more)


def _of_gains(name: str, summary: str, formula: str, citation: str, values: _Values, **more: Any) -> Family:
    """A family of trec_eval's whose values read only the custom ``gains``."""
    return _trec(name, summary, formula, citation, lambda d, m: values(d, m["gains"]), (GAINS,), **more)


for fam in (
    _trec(
        "gm_map",
        "Geometric mean of average precision",
        "per query AP; summary exp(mean(log(max(AP, 0.00001))))",
        "Robertson, 'On GMAP', CIKM 2006; " + TREC,
        _k_gm_map,
        (REL,),
        aggregate="gmean",
        aliases=("gm_ap", "GMAP"),
        perfect_is_one=True,
    ),
    _trec(
        "gm_bpref",
        "Geometric mean of bpref",
        "per query bpref; summary exp(mean(log(max(bpref, 0.00001))))",
        TREC,
        _k_gm_bpref,
        (REL,),
        aggregate="gmean",
        perfect_is_one=True,
    ),
    _at_rel(
        "infAP",
        "Inferred average precision",
        "infAP = (1/R) Σ_{judged relevant at rank k} [1/k + ((k−1)/k) · (pooled_above/(k−1)) · (rel_above + ε)/(rel_above + nonrel_above + 2ε)]; pooled = in the qrels (judged, or unjudged with grade < 0), ε = 0.00001; 1 at rank 1",
        "Yilmaz & Aslam, CIKM 2006; " + TREC,
        infap_values,
        aliases=("infap",),
    ),
    _trec(
        "Rprec_mult",
        "Precision at a multiple of R",
        "Rprec_mult = P@c, c = (long)(mult·R + 0.9) (0 when c < 1)",
        TREC,
        _k_rprec_mult,
        (REL, Param("mult", "float", 1.0, "multiple of R (the number of relevant docs)", lo=0.0)),
    ),
    _trec(
        "utility",
        "Set utility",
        "utility = a·relret + b·(ret − relret) + c·(R − relret) + d·(N + relret − ret − R)",
        TREC,
        _k_utility,
        (
            REL,
            Param("a", "float", 1.0, "worth of a relevant retrieved doc"),
            Param("b", "float", -1.0, "worth of a non-relevant retrieved doc"),
            Param("c", "float", 0.0, "worth of a relevant doc not retrieved"),
            Param("d", "float", 0.0, "worth of a non-relevant doc not retrieved"),
            Param("n_docs", "int", 0, "N, the number of docs in the collection (trec_eval -N)", lo=0),
        ),
        bounds=None,
    ),
    _trec(
        "11pt_avg",
        "Interpolated precision averaged over 11 recall levels",
        "11pt_avg = (1/11) Σ_{p=0,0.1,..,1} IPrec@p, the cut-off at lround(p·R) relevant docs (trec_eval 10.0); "
        "rounding=v9: (long)(p·R + 0.9) (trec_eval 9.x)",
        TREC,
        _k_11pt,
        (REL, ROUNDING),
        aliases=("11-pt_avg",),
        perfect_is_one=True,
    ),
    _at_rel(
        "binG",
        "Binary G",
        "binG = (1/R) Σ_{relevant retrieved} 1 / log2(2 + non-relevant ranked above)",
        G_T,
        bing_values,
        aliases=("bing",),
        perfect_is_one=True,
    ),
    _of_gains(
        "G",
        "Normalised gain G",
        "G = Σ_i g_i / log2(2 + cost_i − gain_i) / Σ ideal gains; cost_i = Σ_{j≤i} max(ideal g_j, 1), gain_i = Σ_{j≤i} g_j",
        G_T,
        g_values,
        bounds=None,
    ),
    _of_gains(
        "ndcg_rel",
        "nDCG averaged over the relevant docs",
        "ndcg_rel = (1/I) [Σ_{retrieved d, g_d>0} DCG@rank(d) / IDCG@min(rank(d), I) + (I − relret) · DCG / IDCG], I = judged docs with gain > 0",
        G_T,
        ndcg_rel_values,
        bounds=None,
        perfect_is_one=True,
    ),
    _trec(
        "Rndcg",
        "nDCG averaged at the R levels",
        "Rndcg = mean of nDCG@b over the ranks b where the ideal gain drops (and at the end of the ranking if it runs past the ideal); 0 when R = 0",
        G_T,
        _k_rndcg,
        (REL, GAINS),
        bounds=None,
        aliases=("rndcg",),
        perfect_is_one=True,
    ),
    _of_gains(
        "ideal_dcg",
        "Ideal discounted cumulative gain",
        "IDCG = Σ_i g*_i / log2(i + 1) over the judged gains sorted decreasingly (positive gains only)",
        TREC,
        ideal_dcg_values,
        bounds=None,
        aliases=("idcg",),
    ),
    _trec(
        "relative_P",
        "Relative precision at k",
        "relative_P@k = |relevant ∩ top k| / min(k, R); 0 when R = 0",
        TREC,
        _k_relative_p,
        (REL,),
        cutoff="required",
        perfect_is_one=True,
    ),
    _at_rel(
        "set_relative_P",
        "Relative precision of the retrieved set",
        "set_relative_P = relret / min(ret, R)",
        TREC,
        set_relative_p_values,
        judged_only=True,
        aliases=("SetRelP",),
        perfect_is_one=True,
    ),
    _at_rel(
        "SetAP",
        "Unranked average precision of the retrieved set",
        "SetAP = relret² / (ret · R) = SetP · SetR",
        TREC,
        set_map_values,
        judged_only=True,
        aliases=("set_map",),
    ),
    _at_rel(
        "num_nonrel_judged_ret",
        "Number of judged non-relevant docs retrieved",
        "Σ_q |retrieved ∩ judged, 0 ≤ grade < rel|",
        TREC,
        nonrel_judged_ret_values,
        aggregate="sum",
        bounds=None,
        aliases=("NumNonRelJudgedRet",),
    ),
    _at_rel(
        "yaap",
        "Yet another average precision",
        "yaap = log((1 + s) / (1 + R − s)), s = Σ_{relevant retrieved} precision at its rank",
        "Robertson, ECIR 2012; " + TREC,
        yaap_values,
        bounds=None,
    ),
    _trec(
        "RBP",
        "Rank-biased precision",
        "RBP = (1 − p) Σ_i gain_i · p^(i−1); gain binary (grade ≥ rel) or, without rel, trec_eval's graded gain rescaled to [0, 1]",
        "Moffat & Zobel, TOIS 2008; " + TREC,
        _k_rbp,
        (_P, _BIN_REL, GAINS),
        cutoff="optional",
    ),
    _trec(
        "rbp_resid",
        "Residual of rank-biased precision",
        "rbp_resid = p^ret + (1 − p) Σ_{unjudged retrieved at rank i} p^(i−1); 0 when every retrieved doc is judged",
        "Moffat & Zobel, TOIS 2008; " + TREC,
        _k_rbp_resid,
        (_P_RESID,),
    ),
    _trec(
        "unj",
        "Fraction of the top k that is unjudged",
        "unj@k = |top k not judged (or judged < 0)| / k, missing ranks counting as judged",
        TREC,
        _k_unj,
        (),
        cutoff="required",
        aliases=("Unj",),
    ),
):
    register(fam)

add_alias("rbp", "RBP", p=0.9)
add_trec_param("RBP", "p")
add_trec_param("rbp_resid", "p")
add_trec_param("Rprec_mult", "mult")
