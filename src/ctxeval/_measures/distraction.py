"""Distraction-aware measures: passages with negative utility (plausible but wrong, see
:mod:`ctxeval._utility`) cost the LLM reader, so they cost the score.

Every kernel reads the per-row utilities of the ``utility`` side data (a
:class:`~ctxeval._core.extras.Utilities`, built once per run by the session, see
``ctxeval._context.utility``); the families declare ``requires={"utility"}`` so that it is built only
when needed. u_i is the utility of the passage at rank i; without @k the whole ranked list counts.

* ``dDCG@k`` = Σ_{i<=k} u_i / log2(i + 1): DCG over utilities (the negative-utility DCG some write-ups
  call UDCG; it is not Trappolini et al.'s metric).
* ``ndDCG@k`` = dDCG@k / IdDCG@k, IdDCG@k = Σ_{j<=k} u*_j / log2(j + 1) over the positive utilities u*
  of the query's judged docs in descending order (retrieved or not). NA when the query has no judged
  doc of positive utility (IdDCG = 0), as there is nothing to normalise by. ndDCG <= 1; it is
  negative when distractors outweigh the help.
* ``UDCG@k`` (Trappolini et al. 2025, as their released code computes it):
  σ((1/|C|) Σ_{p∈C} w(p)·u(p)), C the top k (|C| = min(k, retrieved)), w = ``w_rel`` for relevant
  passages and ``w_irr`` for the others, σ(x) = 1 / (1 + e^-x). Relevant: grade >= ``rel`` on the
  qrels' own grades; by default (``rel`` unset) a positive label utility. A known distractor is never
  relevant. u(p) is the LLM utility (``--utilities``); without that file label-derived stand-ins are
  used: 1 for a relevant passage, else the size of its negative utility (1 for a distractor, the
  penalty's size for a hard negative, 0 otherwise). LLM utilities are used as given: the LLM
  threshold of :mod:`ctxeval._utility` (which irrelevant passages count as distractors) does not
  apply to UDCG. Non-reference form: passages without a utility
  (LLM source only) are left out of C; an empty C gives σ(0) = 0.5 (neither help nor harm), so the
  value always lies in [σ(min(w)·1), σ(max(w)·1)] (defaults: [σ(-1/3), σ(1)] = [0.4174, 0.7311]).
  ``reference=true`` reproduces the released code exactly: an empty list gives 0.0, and a passage
  without a utility is skipped in the sum but counted in |C|.
* ``UDCG-pos@k`` (the positional, fitted form): σ(b + Σ_{i<=k} α_i u_i⁺ + Σ_{i<=k} β_i u_i⁻), u⁺ =
  max(u, 0), u⁻ = max(-u, 0), with α, β, b written by ``ctxeval fit-udcg`` (parameter ``fit``: the
  fit's content hash; a fit file's path given there is read by the session and replaced by its
  hash, so results are keyed by the weights, not by where they were stored); b = 0 gives the paper's form. k defaults to the fit's length and cannot exceed it.
  Like UDCG it reads LLM utilities as given (u for relevant passages, -u for the others, whatever the
  LLM threshold that decides which irrelevant passages count as distractors elsewhere).
* ``DistractorRate@k`` = #(u_i < 0, i <= k) / min(k, n), n the number of passages the run retrieved
  for the query: the share of the passages actually given to the reader (0 for an empty list). A
  run of depth 100 read at k = 400 is judged on its 100 passages, not diluted by 300 empty slots
  (the verbs note when k exceeds the depth of most of a run's lists). ``DistractorHarm@k`` = Σ_{i<=k} max(0, -u_i) (lower is
  better for both). On binary labels (reference ids) a chunk nobody labelled is not known to
  distract, nor known not to: both are NA on a query whose top k holds such a chunk that no rule,
  known list or LLM utility decided (``Utilities.unknown``).

A grade-5 passage above a grade-1 one: u = [1, -1], dDCG@2 = 1 - 1/log2(3) = 0.3691, rate 1/2, harm 1,
UDCG@2 = σ((1·1 - 1/3·1) / 2) = σ(1/3) = 0.5826:

>>> from ctxeval import evaluate
>>> r = evaluate({"q": {"a": 5, "b": 1}}, {"q": {"a": 2.0, "b": 1.0}}, ["dDCG@2", "DistractorRate@2", "DistractorHarm@2", "UDCG@2"]).runs[0]
>>> [round(r.mean(m), 4) for m in ("dDCG@2", "DistractorRate@2", "DistractorHarm@2", "UDCG@2")]
[0.3691, 0.5, 1.0, 0.5826]
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from .._core.evaldata import EvalData

if TYPE_CHECKING:
    from .._core.extras import Fits, Utilities
from .._core.segments import div0, ratio
from .._core.segments import top_rows as _top_rows
from .._errors import ConfigError, MeasureError
from .base import Family, Measure, Param, register

UDCG_CITE = 'Trappolini et al. 2025, "Redefining Retrieval Evaluation in the Era of LLMs", arXiv:2510.21440 (code: GiovanniTRA/UDCG)'
UTIL_CITE = "ctxeval: per-passage utility from labels, known distractors and detection rules, or LLM utilities"
REQ = frozenset({"utility"})

W_REL = Param("w_rel", "float", 1.0, "weight of a relevant passage")
W_IRR = Param("w_irr", "float", -1.0 / 3.0, "weight of an irrelevant passage (the released code's CLI passes -0.333)")
UREL = Param(
    "rel",
    "int",
    None,
    "minimum grade counted as relevant, on the qrels' own grades (default: a positive label utility)",
)
REFERENCE = Param(
    "reference",
    "bool",
    False,
    "reproduce the released code's edge cases: empty list -> 0.0; a passage without a utility counts in |C| but not in the sum",
)
FIT = Param(
    "fit",
    "str",
    None,
    "the fitted alpha/beta/bias written by 'ctxeval fit-udcg': the fit file's path, read and named by its content hash (sha256:...) (required)",
)


def sigmoid(x: np.ndarray) -> np.ndarray:
    """The logistic function, computed without overflow."""
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    pos = x >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-x[pos]))
    e = np.exp(x[~pos])
    out[~pos] = e / (1.0 + e)
    return out


def top_rows(d: EvalData, k: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ranked rows within the cutoff, without touching the rows below it: (row index, query index,
    1-based rank), cached per k. ``k`` None: every row."""
    return d.memo(("dist_top", k), lambda: _top_rows(d.r_off, k))


def utilities_of(d: EvalData) -> Utilities:
    """The ``utility`` side data."""
    return d.extra("utility")


def _cut(m: Measure) -> int | None:
    return None if m.cutoff is None else m.k


def _total(d: EvalData, seg: np.ndarray, values: np.ndarray) -> np.ndarray:
    return np.bincount(seg, weights=values, minlength=d.n_queries).astype(np.float64)


def _ddcg(d: EvalData, m: Measure) -> np.ndarray:
    idx, seg, rank = top_rows(d, _cut(m))
    return _total(d, seg, utilities_of(d).u[idx] / np.log2(rank + 1.0))


def ideal_ddcg(d: EvalData, k: int | None) -> np.ndarray:
    """Per query: the DCG of its judged docs' positive utilities, descending, cut at k."""
    rows = utilities_of(d)
    if rows.pos_u is None or rows.pos_off is None:
        raise ConfigError(
            "ndDCG's ideal needs the qrels doc by doc when a known-distractor list or LLM utilities are in force: "
            "attach_utilities(data, config, qrels)"
        )
    off = rows.pos_off
    seg = np.repeat(np.arange(d.n_queries, dtype=np.int64), np.diff(off))
    pos = np.arange(rows.pos_u.size, dtype=np.int64) - off[:-1][seg] + 1
    keep = np.ones(pos.size, dtype=bool) if k is None else pos <= k
    return np.bincount(seg[keep], weights=rows.pos_u[keep] / np.log2(pos[keep] + 1.0), minlength=d.n_queries).astype(
        np.float64
    )


def _nddcg(d: EvalData, m: Measure) -> np.ndarray:
    num = _ddcg(d, m)
    den = ideal_ddcg(d, None if m.cutoff is None else m.k)
    return ratio(num, den)


def relevant_rows(d: EvalData, rel: int | None, idx: np.ndarray | None = None) -> np.ndarray:
    """Per ranked row (or the rows ``idx``): relevant for UDCG (grade >= rel, or a positive label
    utility when rel is None), and never when on the known-distractor list."""
    rows = utilities_of(d)
    sel = slice(None) if idx is None else idx
    if rel is None:
        out = rows.label[sel] > 0
    else:
        out = d.r_judged[sel] & (d.r_grade[sel] >= rel)
    if rows.known is not None:
        out &= ~rows.known[sel]
    return out


def udcg_utilities(d: EvalData, rel: int | None, idx: np.ndarray | None = None) -> np.ndarray:
    """u(p) of every ranked row (or the rows ``idx``) for UDCG: the LLM utility (NaN where none), or
    the label-derived stand-in (1 for a relevant passage, else the size of its negative utility)."""
    rows = utilities_of(d)
    sel = slice(None) if idx is None else idx
    if rows.llm_u is not None:
        return rows.llm_u[sel]
    return np.where(relevant_rows(d, rel, idx), 1.0, np.maximum(0.0, -rows.u[sel]))


def _udcg(d: EvalData, m: Measure) -> np.ndarray:
    idx, seg, _ = top_rows(d, _cut(m))
    return udcg_of(d, m, seg, relevant_rows(d, m["rel"], idx), udcg_utilities(d, m["rel"], idx))


def udcg_of(d: EvalData, m: Measure, seg: np.ndarray, relevant: np.ndarray, u: np.ndarray) -> np.ndarray:
    """UDCG per query from the rows of C (their query ``seg``, whether each is relevant, its u(p); NaN:
    no utility)."""
    has = ~np.isnan(u)
    contrib = np.where(relevant, m["w_rel"], m["w_irr"]) * np.where(has, u, 0.0)
    total = _total(d, seg, contrib)
    size_all = np.bincount(seg, minlength=d.n_queries).astype(np.float64)
    if m["reference"]:
        mean = div0(total, size_all)
        return np.where(size_all > 0, sigmoid(mean), 0.0)
    size_has = size_all if bool(has.all()) else np.bincount(seg[has], minlength=d.n_queries).astype(np.float64)
    mean = div0(total, size_has)
    return sigmoid(mean)


# --- the positional form -----------------------------------------------------------------------------


def positional_z(u: np.ndarray, rank: np.ndarray, seg: np.ndarray, n_q: int, fit: dict[str, Any]) -> np.ndarray:
    """Per query: b + Σ_i α_i max(u_i, 0) + Σ_i β_i max(-u_i, 0) over the given rows (ranks <= the fit's k)."""
    r = rank - 1
    z = fit["alpha"][r] * np.maximum(u, 0.0) + fit["beta"][r] * np.maximum(-u, 0.0)
    return fit["bias"] + np.bincount(seg, weights=z, minlength=n_q)


def _udcg_pos(d: EvalData, m: Measure) -> np.ndarray:
    name = m["fit"]
    if name is None:
        raise MeasureError(
            "measure UDCG-pos needs a fit file: UDCG-pos(fit='udcg_fit.json')@5, written by 'ctxeval fit-udcg'"
        )
    fits: Fits = d.extra("fits")
    fit = fits.by_hash.get(name)
    if fit is None:
        raise MeasureError(f"{m}: no fitted weights named {name!r} were given (pass the fit file's path as fit=...)")
    k = fit["k"] if m.cutoff is None else m.k
    if k > fit["k"]:
        raise MeasureError(
            f"{m}: the fit in {fit.get('source', name)} has weights for ranks 1..{fit['k']} only; use a cutoff <= {fit['k']}"
        )
    idx, seg, rank = top_rows(d, k)
    return sigmoid(positional_z(utilities_of(d).u_direct[idx], rank, seg, d.n_queries, fit))


# --- rate and harm -------------------------------------------------------------------------------------


def unknown_queries(d: EvalData, k: int | None) -> np.ndarray | None:
    """Per query: the top k holds a passage nobody labelled and nothing decided (binary labels, see
    ``Utilities.unknown``), so how many distractors it holds is unknown; None on graded labels."""
    unknown = utilities_of(d).unknown
    if unknown is None:
        return None
    idx, seg, _ = top_rows(d, k)
    return np.bincount(seg[unknown[idx]], minlength=d.n_queries) > 0


def _unknown_na(d: EvalData, m: Measure, values: np.ndarray) -> np.ndarray:
    unknown = unknown_queries(d, _cut(m))
    return values if unknown is None else np.where(unknown, np.nan, values)


def _rate(d: EvalData, m: Measure) -> np.ndarray:
    idx, seg, _ = top_rows(d, _cut(m))
    neg = seg[utilities_of(d).u[idx] < 0]
    given = np.minimum(d.n_ret, m.k).astype(np.float64)
    return _unknown_na(d, m, div0(np.bincount(neg, minlength=d.n_queries).astype(np.float64), given))


def _harm(d: EvalData, m: Measure) -> np.ndarray:
    idx, seg, _ = top_rows(d, _cut(m))
    return _unknown_na(d, m, _total(d, seg, np.maximum(0.0, -utilities_of(d).u[idx])))


INF = math.inf

for fam in (
    Family(
        "dDCG",
        "Distraction-aware DCG: DCG over signed per-passage utilities",
        "dDCG@k = Σ_{i≤k} u_i / log2(i + 1), u_i the utility of the passage at rank i (negative for distractors)",
        UTIL_CITE,
        _ddcg,
        cutoff="optional",
        bounds=(-INF, INF),
        group="distraction",
        requires=REQ,
        aliases=("ddcg",),
    ),
    Family(
        "ndDCG",
        "dDCG normalised by the ideal DCG of the positive utilities",
        "ndDCG@k = dDCG@k / IdDCG@k, IdDCG@k = Σ_{j≤k} u*_j / log2(j + 1) over the positive utilities u* of the "
        "query's judged docs, descending; NA when there is none; ≤ 1, negative when distractors outweigh the help",
        UTIL_CITE,
        _nddcg,
        cutoff="optional",
        bounds=(-INF, 1.0),
        group="distraction",
        requires=REQ,
        aliases=("nddcg",),
    ),
    Family(
        "UDCG",
        "Utility and distraction of the top-k set for an LLM reader (released, order-free form)",
        "UDCG@k = σ((1/|C|) Σ_{p∈C} w(p)·u(p)), C = top k, w = w_rel (relevant) or w_irr, σ logistic; u(p) = LLM utility "
        "(--utilities) or the label stand-in (relevant 1, else |negative utility|); passages without u left out of C, "
        "empty C → σ(0); reference=true: empty list → 0.0, missing u counted in |C|",
        UDCG_CITE,
        _udcg,
        (W_REL, W_IRR, UREL, REFERENCE),
        cutoff="optional",
        bounds=(0.0, 1.0),
        group="distraction",
        requires=REQ,
        aliases=("udcg",),
    ),
    Family(
        "UDCG-pos",
        "Positional UDCG with fitted weights",
        "UDCG-pos@k = σ(b + Σ_{i≤k} α_i max(u_i, 0) + Σ_{i≤k} β_i max(-u_i, 0)), α, β, b from a fit file written by "
        "'ctxeval fit-udcg'; k ≤ the fit's length (default: it)",
        UDCG_CITE + " (§5, learned positional form)",
        _udcg_pos,
        (FIT,),
        cutoff="optional",
        bounds=(0.0, 1.0),
        group="distraction",
        requires=REQ | {"fits"},
        aliases=("udcg-pos", "udcg_pos"),
    ),
    Family(
        "DistractorRate",
        "Share of the passages given (the top k, or fewer when the list is shorter) that have negative utility",
        "DistractorRate@k = #(u_i < 0, i ≤ k) / min(k, n), n = passages retrieved for the query (0 for an empty list); "
        "on binary labels (reference ids) NA where the top k holds an unlabelled passage nothing decided",
        UTIL_CITE,
        _rate,
        cutoff="required",
        bounds=(0.0, 1.0),
        group="distraction",
        requires=REQ,
        aliases=("distractorrate", "distractor_rate"),
        higher_is_better=False,
        needs_negatives=True,
    ),
    Family(
        "DistractorHarm",
        "Total negative utility in the top k",
        "DistractorHarm@k = Σ_{i≤k} max(0, −u_i) (at most k, utilities lying in [−1, 1]); "
        "on binary labels NA where the top k holds an unlabelled passage nothing decided",
        UTIL_CITE,
        _harm,
        cutoff="required",
        bounds=(0.0, INF),
        group="distraction",
        requires=REQ,
        aliases=("distractorharm", "distractor_harm"),
        higher_is_better=False,
        needs_negatives=True,
    ),
):
    register(fam)
