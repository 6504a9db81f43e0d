"""Fitting the positional UDCG (Trappolini et al. 2025, §5) to answer correctness: ``ctxeval fit-udcg``.

Each (run, query) pair with a known answer correctness y ∈ {0, 1} is one observation with features
u⁺_i = max(u_i, 0) and u⁻_i = max(-u_i, 0) for ranks i = 1..k (0 beyond the end of the list), u the
per-passage utilities of :mod:`ctxeval._utility` (LLM utilities as given, without the threshold that
decides which irrelevant passages count as distractors). The model P(correct) = σ(b + Σ α_i u⁺_i + Σ β_i u⁻_i)
is fitted by L2-regularised logistic regression (the intercept b is not penalised) with a damped
Newton / IRLS solver (:func:`logistic_fit`): deterministic, numpy only.

Held-out evaluation: the queries are split into ``folds`` groups (seeded permutation; every run's
observation of a query lands in the same fold); the model fitted on the other folds predicts each
fold. Out-of-fold predictions are compared with the fixed measures UDCG@k (released form), nDCG@k and
RA-nWG@k on the same observations by the point-biserial correlation (Pearson r between y and the
value) and the AUC (probability that a correct answer's value exceeds an incorrect one's, ties
counting 1/2). The final α, β, b are fitted on every observation and written as JSON that
``UDCG-pos(fit=FILE)@k`` loads.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._context.grades import check_scale
from ._context.settings import RagConfig
from ._context.utility import UtilityConfig
from ._engines.base import provider
from ._engines.blocks import Block
from ._errors import ConfigError
from ._io.model import Run
from ._io.side import read_answers
from ._measures import Measure, make
from ._measures.distraction import sigmoid
from ._names import unique_names
from ._policies import Policies
from ._session import open_session, resolve_inputs
from ._show import fmt, html_table, pandas

__all__ = ["FitResult", "auc", "features", "fit_udcg", "logistic_fit", "point_biserial"]

FIT_KIND = "ctxeval.udcg-fit"


# --------------------------------------------------------------------------------------------------
# the solver
# --------------------------------------------------------------------------------------------------


def _objective(A: np.ndarray, y: np.ndarray, w: np.ndarray, pen: np.ndarray) -> float:
    z = A @ w
    # log(1 + e^z) - y z, computed stably
    loss = np.logaddexp(0.0, z) - y * z
    return float(loss.sum() + 0.5 * np.sum(pen * w * w))


def logistic_fit(
    X: np.ndarray, y: np.ndarray, l2: float = 1.0, max_iter: int = 100, tol: float = 1e-10
) -> tuple[np.ndarray, float, int]:
    """Minimise Σ_n [log(1 + e^{z_n}) - y_n z_n] + (l2 / 2) ||w||², z = b + X w, by Newton's method with
    step halving. Returns (w, b, iterations). ``l2`` > 0 keeps the solution finite on separable data.

    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([0.0, 0.0, 1.0, 1.0])
    >>> w, b, _ = logistic_fit(X, y, l2=0.1)
    >>> bool(w[0] > 0), round(float(-b / w[0]), 6)  # symmetric data: the boundary sits at x = 1.5
    (True, 1.5)
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] != y.shape[0]:
        raise ConfigError(f"logistic_fit: X must be n x p and y of length n, got {X.shape} and {y.shape}")
    if not (isinstance(l2, (int, float)) and math.isfinite(l2) and l2 >= 0):
        raise ConfigError(f"l2 must be a number >= 0, got {l2!r}")
    n, p = X.shape
    A = np.hstack([np.ones((n, 1)), X])
    pen = np.r_[0.0, np.full(p, float(l2))]
    w = np.zeros(p + 1)
    f = _objective(A, y, w, pen)
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 (the count is returned)
        prob = sigmoid(A @ w)
        g = A.T @ (prob - y) + pen * w
        h = A.T @ (A * (prob * (1.0 - prob))[:, None]) + np.diag(pen) + 1e-9 * np.eye(p + 1)
        step = np.linalg.solve(h, g)
        t = 1.0
        while True:
            w_new = w - t * step
            f_new = _objective(A, y, w_new, pen)
            if f_new <= f + 1e-12 * max(1.0, abs(f)) or t < 1e-8:
                break
            t *= 0.5
        done = float(np.max(np.abs(w_new - w))) < tol
        w, f = w_new, f_new
        if done:
            break
    return w[1:], float(w[0]), it


def auc(y: np.ndarray, score: np.ndarray) -> float:
    """P(score of a positive > score of a negative), ties 1/2 (Mann-Whitney U / (n1 n0)); NaN if a
    class is empty.

    >>> auc(np.array([0, 0, 1, 1]), np.array([0.1, 0.4, 0.35, 0.8]))
    0.75
    """
    y = np.asarray(y).astype(bool)
    s = np.asarray(score, dtype=np.float64)
    n1, n0 = int(y.sum()), int((~y).sum())
    if n1 == 0 or n0 == 0:
        return math.nan
    order = np.argsort(s, kind="stable")
    ranks = np.empty(s.size, dtype=np.float64)
    sorted_s = s[order]
    # average ranks over ties
    starts = np.flatnonzero(np.r_[True, sorted_s[1:] != sorted_s[:-1]])
    ends = np.r_[starts[1:], s.size]
    avg = (starts + ends + 1) / 2.0
    ranks[order] = np.repeat(avg, ends - starts)
    return float((ranks[y].sum() - n1 * (n1 + 1) / 2.0) / (n1 * n0))


def point_biserial(y: np.ndarray, score: np.ndarray) -> float:
    """Pearson correlation between the 0/1 outcome and the value; NaN when either is constant."""
    y = np.asarray(y, dtype=np.float64)
    s = np.asarray(score, dtype=np.float64)
    if y.size < 2 or np.std(y) == 0 or np.std(s) == 0:
        return math.nan
    return float(np.corrcoef(y, s)[0, 1])


# --------------------------------------------------------------------------------------------------
# fitting
# --------------------------------------------------------------------------------------------------


def features(r_off: np.ndarray, u: np.ndarray, k: int) -> np.ndarray:
    """``float64[n_q, 2k]``: [u⁺_1..u⁺_k, u⁻_1..u⁻_k] per query (0 beyond the list)."""
    r_off = np.asarray(r_off, dtype=np.int64)
    n_q = r_off.size - 1
    lens = np.diff(r_off)
    rank = np.arange(int(r_off[-1]), dtype=np.int64) - np.repeat(r_off[:-1], lens)
    seg = np.repeat(np.arange(n_q, dtype=np.int64), lens)
    keep = rank < k
    X = np.zeros((n_q, 2 * k))
    X[seg[keep], rank[keep]] = np.maximum(u[keep], 0.0)
    X[seg[keep], k + rank[keep]] = np.maximum(-u[keep], 0.0)
    return X


@dataclass
class FitResult:
    """The fitted weights (``fit``: the JSON written for ``UDCG-pos``) and the held-out comparison."""

    fit: dict[str, Any]
    report: dict[str, Any]

    def fit_json(self) -> str:
        return json.dumps(self.fit, indent=2, ensure_ascii=False, allow_nan=False) + "\n"

    def __repr__(self) -> str:
        r = self.report
        auc = (r["held_out"].get(f"UDCG-pos@{r['k']} (fitted)") or {}).get("auc")
        return (
            f"FitResult(k={r['k']}, {r['n_observations']} observations over {r['n_queries']} queries; "
            f"held-out AUC of the fitted UDCG-pos {fmt(auc)})"
        )

    def _repr_html_(self) -> str:
        rows = [[name, h.get("r"), h.get("auc"), h.get("n")] for name, h in self.report["held_out"].items()]
        return html_table(
            ["score", "point-biserial r", "AUC", "n"], rows, "held out: each score against answer correctness"
        )

    def to_pandas(self) -> Any:
        """The held-out comparison: one row per score (``score, r, auc, fold_mean_r, fold_mean_auc, n``)."""
        pd = pandas("FitResult.to_pandas")
        return pd.DataFrame([{"score": name, **h} for name, h in self.report["held_out"].items()])


def _nan_none(x: float) -> float | None:
    return None if x is None or math.isnan(x) else float(x)


def _answered(names: list[str], ans: Any) -> list[str]:
    """The runs the answers name, when they name every run of ``names`` (else a ConfigError)."""
    missing_runs = [n for n in names if n not in ans.runs]
    if missing_runs:
        raise ConfigError(f"{ans.source}: no answers for run(s) {missing_runs}; its run column holds {ans.runs}")
    return list(ans.runs)


@dataclass(frozen=True)
class _Features:
    """fit_udcg's block function (:mod:`ctxeval._engines.blocks`): per query its features (u⁺ and u⁻
    at ranks 1..k, :func:`features`) and the fixed measures it is compared with; ``off_scale`` counts
    the blocks whose grades lie off the 1-5 scale RA-nWG reads (it is then not compared)."""

    measures: tuple[tuple[str, Measure], ...]
    k: int

    def __call__(self, session: Any, data: Any) -> Block:
        block = Block(list(data.qids), values={"X": features(data.r_off, data.extra("utility").u_direct, self.k)})
        for key, m in self.measures:
            if key == "RA-nWG":
                try:
                    check_scale(data, [m])
                except ConfigError:
                    block.totals["off_scale"] = 1
                    block.values[key] = np.full(data.n_queries, np.nan)
                    continue
            block.values[key] = m.compute(data)
        return block


def fit_udcg(
    qrels: Any = None,
    runs: Any = None,
    answers: Any = None,
    k: int = 5,
    *,
    samples: Any = None,
    folds: int = 5,
    seed: int = 0,
    l2: float = 1.0,
    utility: UtilityConfig | Mapping[str, Any] | None = None,
    policies: Policies | Mapping[str, Any] | None = None,
    rag: RagConfig | Mapping[str, Any] | None = None,
    engine: Any = "local",
) -> FitResult:
    """Fit the positional UDCG's α, β, b to answer correctness; compare it held-out with UDCG@k, nDCG@k
    and RA-nWG@k (see the module docstring). Runs are matched to the answers' ``run`` column by name;
    ``samples`` (instead of ``qrels`` and ``runs``): sample sets, named as the answers name them
    (``{"bm25": "bm25.jsonl", ...}``); ``engine``: where the features are computed, as for
    :func:`ctxeval.evaluate`."""
    if answers is None:
        raise ConfigError("fit_udcg needs answers: a file or frame of (query id, run, correct)")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(f"k must be a whole number >= 1, got {k!r}")
    if isinstance(folds, bool) or not isinstance(folds, int) or folds < 2:
        raise ConfigError(f"folds must be a whole number >= 2, got {folds!r}")
    eng = provider(engine)
    qrels, runs, input_notes, sets = resolve_inputs("fit-udcg", qrels, runs, samples, policies, eng)
    measures = {"UDCG": make("UDCG", None, k), "nDCG": make("nDCG", None, k), "RA-nWG": make("RA-nWG", None, k)}
    session, run_objs = open_session(
        qrels, runs, policies=policies, rag=rag, utility=utility, samples=sets, engine=eng, extras=["utility", "grades"]
    )
    if not run_objs:
        raise ConfigError("fit-udcg needs at least one run")
    ans = read_answers(answers)
    ans_src = ans.source
    config = session.utility
    if all(isinstance(r, Run) for r in run_objs):  # named before they are read: runs without answers fail now
        _answered(unique_names(run_objs), ans)
    fn = _Features(tuple(measures.items()), k)
    ms = [measures["UDCG"], measures["nDCG"]]
    mapped = [session.blocks(run, ms, fn, keep_rows=True, extras=["grades"]) for run in run_objs]
    names = unique_names(mapped)
    known_runs = _answered(names, ans)
    notes: list[str] = []
    X_parts: list[np.ndarray] = []
    y_parts: list[np.ndarray] = []
    q_parts: list[list[str]] = []
    base_parts: dict[str, list[np.ndarray]] = {name: [] for name in measures}
    ragnwg_ok = True
    for run, name in zip(mapped, names):
        block = run.block
        lookup = {q: y for (r, q), y in ans.correct.items() if r == name}
        have = np.array([q in lookup for q in block.qids], dtype=bool)
        if (~have).any():
            notes.append(f"{name}: {int((~have).sum())} evaluated queries have no answer row (left out)")
        extra = len(set(lookup) - set(block.qids))
        if extra:
            notes.append(
                f"{name}: {extra} answer rows name queries that are not evaluated (not in the qrels or the run; left out)"
            )
        X_parts.append(block.values["X"][have])
        y_parts.append(np.array([lookup[q] for q, h in zip(block.qids, have) if h], dtype=np.float64))
        q_parts.append([q for q, h in zip(block.qids, have) if h])
        for key in measures:
            if key == "RA-nWG" and block.totals.get("off_scale"):
                ragnwg_ok = False
                base_parts[key].append(np.full(int(have.sum()), np.nan))
                continue
            base_parts[key].append(block.values[key][have])
    other = sorted(set(known_runs) - set(names))
    if other:
        notes.append(f"answers for runs not given ({', '.join(other)}) are ignored")
    if not ragnwg_ok:
        notes.append("RA-nWG needs grades on the 1-5 scale (--grade-map): not compared")
    X = np.vstack(X_parts) if X_parts else np.zeros((0, 2 * k))
    y = np.concatenate(y_parts) if y_parts else np.zeros(0)
    qids = [q for part in q_parts for q in part]
    if y.size == 0:
        raise ConfigError("no observation: no evaluated query of any run has an answer row")
    uq = sorted(set(qids))
    if len(uq) < folds:
        raise ConfigError(f"{len(uq)} queries cannot be split into {folds} folds; use --folds <= {len(uq)}")
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(uq))
    fold_of_q = {q: int(i % folds) for q, i in zip(uq, np.argsort(perm, kind="stable"))}
    fold = np.array([fold_of_q[q] for q in qids], dtype=np.int64)
    oof = np.full(y.size, np.nan)
    for f in range(folds):
        test = fold == f
        w, b, _ = logistic_fit(X[~test], y[~test], l2)
        oof[test] = sigmoid(b + X[test] @ w)
    base = {key: np.concatenate(v) for key, v in base_parts.items()}
    scores = {
        f"UDCG-pos@{k} (fitted)": oof,
        f"UDCG@{k}": base["UDCG"],
        f"nDCG@{k}": base["nDCG"],
        f"RA-nWG@{k}": base["RA-nWG"],
    }
    held: dict[str, Any] = {}
    for name, s in scores.items():
        ok = ~np.isnan(s)
        per_r = [point_biserial(y[ok & (fold == f)], s[ok & (fold == f)]) for f in range(folds)]
        per_a = [auc(y[ok & (fold == f)], s[ok & (fold == f)]) for f in range(folds)]
        held[name] = {
            "r": _nan_none(point_biserial(y[ok], s[ok])) if ok.any() else None,
            "auc": _nan_none(auc(y[ok], s[ok])) if ok.any() else None,
            "fold_mean_r": _nan_none(float(np.nanmean(per_r))) if not all(math.isnan(v) for v in per_r) else None,
            "fold_mean_auc": _nan_none(float(np.nanmean(per_a))) if not all(math.isnan(v) for v in per_a) else None,
            "n": int(ok.sum()),
        }
    w, b, iters = logistic_fit(X, y, l2)
    fit = {
        "kind": FIT_KIND,
        "k": k,
        "alpha": [float(x) for x in w[:k]],
        "beta": [float(x) for x in w[k:]],
        "bias": float(b),
        "model": "P(correct) = sigmoid(bias + sum_i alpha_i max(u_i, 0) + sum_i beta_i max(-u_i, 0)), ranks 1..k",
        "l2": float(l2),
        "iterations": iters,
        "n_observations": int(y.size),
        "n_queries": len(uq),
        "runs": names,
        "answers": ans_src,
        "utility": config.describe(),
        "held_out": held,
    }
    report = {
        "k": k,
        "folds": folds,
        "seed": seed,
        "l2": float(l2),
        "runs": names,
        "n_observations": int(y.size),
        "n_queries": len(uq),
        "positive_rate": float(y.mean()),
        "held_out": held,
        "fit": {"alpha": fit["alpha"], "beta": fit["beta"], "bias": fit["bias"]},
        "utility": config.describe(),
        "notes": input_notes + notes + list(dict.fromkeys([*session.notes, *(n for r in mapped for n in r.notes)])),
        "output": None,
    }
    return FitResult(fit, report)
