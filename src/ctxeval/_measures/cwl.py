"""The C/W/L measures as cwl_eval computes them (Azzopardi, Thomas & Moffat, SIGIR 2019; ``cwl-eval``
1.0.12 is this module's oracle, through ir_measures' provider and on its own).

A C/W/L measure is a user model: ``C_i``, the chance of reading on from rank i to i + 1. From it, over
the ranking cut or padded to ``depth`` ranks (cwl_eval's ``max_n``, 1000): the weights ``W_i =
Π_{j<i} C_j / Σ_m Π_{j<m} C_j`` and the chance of stopping at i, ``L_i = Π_{j<i} C_j · (1 − C_i)``.
cwl_eval prints five figures per query, each a measure here (``figure=``):

* ``EU``, the expected utility per item, ``Σ W_i g_i``: the measure's value (the default);
* ``ETU``, the expected total utility, ``Σ L_i Σ_{j≤i} g_j``;
* ``ETC``, the expected total cost, ``Σ L_i · i`` (every item costs 1: ctxeval reads no costs);
* ``ED``, the expected depth, ``1 / W_1``;
* ``ResEU``, ``ResETU``, ``ResETC``, ``ResED``: cwl_eval's residuals, the figure with every unjudged
  doc (and every rank past the end of the ranking, up to ``depth``) given the top gain, less the figure
  as it is.

cwl_eval's expected cost per item (EC) is left out: with unit costs it is 1, its residual 0. Its
cost-aware forms are left out too: cwl_eval keys costs by the run's second column (an element type per
row), which ctxeval's readers do not keep.

**Gains.** cwl_eval reads the qrels' values as gains in [0, 1] and refuses others; ir_measures maps a
grade onto [0, 1] as ``(clip(grade, min_rel, max_rel) − min_rel) / (max_rel − min_rel)`` (negative
grades first count as 0). Here ``max_rel`` given is ir_measures' reading; without it grades are the
gains, as cwl_eval reads them, and a grade above 1 is an error saying to give ``max_rel``. Unjudged
docs have gain 0 (the residuals give them 1).

**Order.** cwl_eval takes the run in file order, ir_measures sorts it by score (ties in file order);
ctxeval ranks it by its ``ties`` rule (trec_eval's: score descending, then doc id descending). With
distinct scores the three agree; ``ties="input"`` is cwl_eval's reading of a file. cwl_eval also
scores run topics the qrels lack (every gain 0); ctxeval, like ir_measures, evaluates judged topics.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .._core.evaldata import EvalData
from .._errors import MeasureError
from .base import Family, Measure, Param, register

__all__ = ["CWL"]

CWL = "cwl_eval 1.0.12 (Azzopardi, Thomas & Moffat, SIGIR 2019)"
FIGURES = ("EU", "ETU", "ETC", "ED", "ResEU", "ResETU", "ResETC", "ResED")
_BLOCK = 2048  # queries per block: a block's matrices are BLOCK x depth

MIN_REL = Param("min_rel", "int", 0, "grade of gain 0 (ir_measures' scaling)")
MAX_REL = Param(
    "max_rel",
    "int",
    None,
    "grade of gain 1: (grade − min_rel) / (max_rel − min_rel), clipped (ir_measures' scaling); "
    "none: the grades are the gains, in [0, 1], as cwl_eval reads them",
)
FIGURE = Param("figure", "str", "EU", "which of cwl_eval's per-query figures: " + ", ".join(FIGURES), choices=FIGURES)
DEPTH = Param("depth", "int", 1000, "ranks the user model runs over (cwl_eval's max_n)", lo=1)
T_GOAL = Param("T", "float", 1.0, "the gain the user wants (INST, INSQ, BPM, NERR11)", lo=0.0, lo_open=True)
GAIN_PARAMS = (MIN_REL, MAX_REL, FIGURE, DEPTH)


def _gains(d: EvalData, m: Measure, binary: bool) -> np.ndarray:
    """The gain of every judged run row, as the measure reads the grades (``binary``: the family has
    ``rel``, a binary gain when given)."""
    grade = np.maximum(d.j_grade, 0).astype(np.float64)
    if binary and m["rel"] is not None:
        return (d.j_grade >= m["rel"]).astype(np.float64)
    lo, hi = m["min_rel"], m["max_rel"]
    if hi is None:
        top = int(d.q_grade.max()) if d.q_grade.size else 0
        if top > 1:
            raise MeasureError(
                f"measure {m}: cwl_eval reads grades as gains in [0, 1], and the qrels hold grades up to {top}: "
                f"give the top grade, e.g. {m.family}(max_rel={top}) (ir_measures' scaling)"
            )
        return grade
    if hi <= lo:
        raise MeasureError(f"measure {m}: max_rel must exceed min_rel, got {hi} <= {lo}")
    return (np.clip(grade, lo, hi) - lo) / (hi - lo)


CVec = Callable[[np.ndarray, Measure], np.ndarray]


def _figures(cvec: CVec, binary: bool = False) -> Callable[[EvalData, Measure], np.ndarray]:
    """The kernel of a C/W/L measure whose continuation ``C`` (queries x depth) ``cvec(gains, m)`` gives
    (``binary``: the family reads ``rel``)."""

    def kernel(d: EvalData, m: Measure) -> np.ndarray:
        n = int(m["depth"])
        figure = m["figure"]
        best = figure.startswith("Res")
        gain = _gains(d, m, binary)
        sel = np.flatnonzero(d.j_rank <= n)
        seg, col, g = d.j_seg[sel], d.j_rank[sel] - 1, gain[sel]
        out = np.zeros(d.n_queries)
        cost = np.cumsum(np.ones(n))
        for a in range(0, d.n_queries, _BLOCK):
            b = min(a + _BLOCK, d.n_queries)
            lo, hi = np.searchsorted(seg, [a, b])
            worst = np.zeros((b - a, n))
            worst[seg[lo:hi] - a, col[lo:hi]] = g[lo:hi]
            value = _figure(worst, cvec(worst, m), cost, figure.removeprefix("Res"))
            if best:
                top = np.ones((b - a, n))
                top[seg[lo:hi] - a, col[lo:hi]] = g[lo:hi]
                value = _figure(top, cvec(top, m), cost, figure[3:]) - value
            out[a:b] = value
        return out

    return kernel


def _figure(gains: np.ndarray, c: np.ndarray, cost: np.ndarray, figure: str) -> np.ndarray:
    """One of cwl_eval's figures for every row of ``gains`` (cwl_metrics.CWLMetric._do_score)."""
    reach = np.ones_like(c)
    np.cumprod(c[:, :-1], axis=1, out=reach[:, 1:])
    w1 = 1.0 / reach.sum(axis=1)
    if figure == "ED":
        return 1.0 / w1
    if figure == "EU":
        return np.einsum("ij,ij->i", reach * w1[:, None], gains)
    stop = reach * (1.0 - c)
    if figure == "ETU":
        return np.einsum("ij,ij->i", stop, np.cumsum(gains, axis=1))
    return stop @ cost  # ETC


def _ranks(n: int) -> np.ndarray:
    return np.arange(1, n + 1, dtype=np.float64)


def _c_rbp(g: np.ndarray, m: Measure) -> np.ndarray:
    return np.full(g.shape, float(m["p"]))


def _c_inst(g: np.ndarray, m: Measure) -> np.ndarray:
    T = float(m["T"])
    ti = T - np.cumsum(g, axis=1)
    r = _ranks(g.shape[1])
    return ((r + T + ti - 1.0) / (r + T + ti)) ** 2.0


def _insq_base(n: int, T: float) -> np.ndarray:
    r = _ranks(n)
    return ((r + 2.0 * T - 1.0) / (r + 2.0 * T)) ** 2.0


def _c_insq(g: np.ndarray, m: Measure) -> np.ndarray:
    return np.broadcast_to(_insq_base(g.shape[1], float(m["T"])), g.shape).copy()


def _c_bpm(g: np.ndarray, m: Measure) -> np.ndarray:
    # gains are >= 0, so the cumulative gain never falls: "continue while below T" is a prefix
    within = _ranks(g.shape[1]) < m.k  # the cost so far (one per item) below K
    return ((np.cumsum(g, axis=1) < float(m["T"])) & within).astype(np.float64)


def _sdcg_base(n: int, k: int) -> np.ndarray:
    log2 = math.log(2.0)
    out = np.zeros(n)
    for i in range(1, min(k, n + 1)):  # cwl_dcg: math.log(i + 1, 2) / math.log(i + 2, 2) while i < k
        out[i - 1] = (math.log(i + 1) / log2) / (math.log(i + 2) / log2)
    return out


def _c_sdcg(g: np.ndarray, m: Measure) -> np.ndarray:
    return np.broadcast_to(_sdcg_base(g.shape[1], m.k), g.shape).copy()


def _before_k(g: np.ndarray, k: int) -> np.ndarray:
    return _ranks(g.shape[1]) < k  # i < k - 1, 0-based


def _c_nerr8(g: np.ndarray, m: Measure) -> np.ndarray:
    return np.where(_before_k(g, m.k), 1 - g, 0.0)


def _c_nerr9(g: np.ndarray, m: Measure) -> np.ndarray:
    r = _ranks(g.shape[1])
    return np.where(_before_k(g, m.k), (1.0 * r / (r + 1.0)) * (1.0 - g), 0.0)


def _c_nerr10(g: np.ndarray, m: Measure) -> np.ndarray:
    return float(m["p"]) * (1 - g)


def _c_nerr11(g: np.ndarray, m: Measure) -> np.ndarray:
    return _insq_base(g.shape[1], float(m["T"])) * (1.0 - g)


_AZZ = "Azzopardi, Moffat & Mackenzie, ICTIR 2021 (ERR is not C/W/L); " + CWL
_W = "W_i = Π_{j<i} C_j / Σ_m Π_{j<m} C_j over depth ranks; value Σ W_i g_i (figure=EU)"

_RBP_PARAMS = (
    Param("p", "float", 0.8, "persistence", lo=0.0, hi=1.0, hi_open=True),
    Param("rel", "int", None, "binary gain: grade >= rel (ir_measures' cwl_eval RBP); none: graded"),
)
_DCG = Param("dcg", "str", "log2", "DCG's discount (ir_measures' parameter: log2 only)", choices=("log2",))
_PHI = Param("p", "float", 0.9, "patience (cwl_eval's phi)", lo=0.0, hi=1.0)
#: name, summary, continuation C_i, citation, its kernel, parameters before the gain ones, cut-off, aliases
_FAMILIES = (
    ("INST", "INST: an adaptive user wanting T gain", "C_i = ((i + T + T_i − 1) / (i + T + T_i))², T_i = T − Σ_{j≤i} g_j",
     "Moffat, Bailey, Scholer & Thomas, ADCS 2015; " + CWL, _figures(_c_inst), (T_GOAL,), "none", ()),
    ("INSQ", "INSQ: a user wanting T gain, patience set in advance", "C_i = ((i + 2T − 1) / (i + 2T))²",
     "Moffat, Scholer & Thomas, ADCS 2012; " + CWL, _figures(_c_insq), (T_GOAL,), "none", ()),
    ("BPM", "Bejeweled player model (static): stop at T gain or K items",
     "C_i = 1 while Σ_{j≤i} g_j < T and i < K, else 0 (K the cut-off)",
     "Zhang, Liu, Li, Zhang, Xu & Ma, SIGIR 2017; " + CWL, _figures(_c_bpm), (T_GOAL,), "required", ()),
    ("SDCG", "Scaled DCG: DCG@k with its discounts as a C/W/L user model", "C_i = log2(i + 1) / log2(i + 2) for i < k, else 0",
     "Järvelin & Kekäläinen, TOIS 2002; Moffat 2013; " + CWL + " (NDCG-k@k)", _figures(_c_sdcg), (_DCG,), "required", ()),
    ("NERR8", "Not (but nearly) ERR, equation 8: gain-based stopping, cut at k", "C_i = 1 − g_i for i < k, else 0",
     _AZZ, _figures(_c_nerr8), (), "required", ("NERR-EQ8",)),
    ("NERR9", "Not (but nearly) ERR, equation 9: gain-based stopping and discount, cut at k",
     "C_i = i / (i + 1) · (1 − g_i) for i < k, else 0", _AZZ, _figures(_c_nerr9), (), "required", ("NERR-EQ9",)),
    ("NERR10", "Not (but nearly) ERR, equation 10: gain-based stopping, RBP's patience", "C_i = p · (1 − g_i)",
     _AZZ, _figures(_c_nerr10), (_PHI,), "none", ("NERR-EQ10",)),
    ("NERR11", "Not (but nearly) ERR, equation 11: gain-based stopping, INST's goal",
     "C_i = ((i + 2T − 1) / (i + 2T))² · (1 − g_i)", _AZZ, _figures(_c_nerr11), (T_GOAL,), "none", ("NERR-EQ11",)),
    ("RBP-CWL", "Rank-biased precision as cwl_eval computes it, with its figures and residuals",
     "C_i = p; gain binary (grade ≥ rel) when rel is given", "Moffat & Zobel, TOIS 2008; " + CWL + " (RBP@p)",
     _figures(_c_rbp, binary=True), _RBP_PARAMS, "none", ("cwl_RBP", "RBP_cwl")),
)  # fmt: skip

for name, summary, cvec, cite, kernel, params, cutoff, aliases in _FAMILIES:
    register(
        Family(name, summary, f"{cvec}; {_W}", cite, kernel, (*params, *GAIN_PARAMS), cutoff=cutoff, aliases=aliases,
               group="cwl", bounds=None)
    )  # fmt: skip
