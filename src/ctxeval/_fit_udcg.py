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

import csv
import io
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ._errors import ConfigError, DuplicateError, EmptyInputError, FormatError, InputError
from ._measures._distraction import sigmoid

if TYPE_CHECKING:
    import polars as pl
else:
    from ._lazy import pl

__all__ = ["logistic_fit", "read_answers", "fit_udcg", "FitResult", "auc", "point_biserial", "features"]

FIT_KIND = "ctxeval.udcg-fit"


# --------------------------------------------------------------------------------------------------
# the solver
# --------------------------------------------------------------------------------------------------


def _objective(A: np.ndarray, y: np.ndarray, w: np.ndarray, pen: np.ndarray) -> float:
    z = A @ w
    # log(1 + e^z) - y z, computed stably
    loss = np.logaddexp(0.0, z) - y * z
    return float(loss.sum() + 0.5 * np.sum(pen * w * w))


def logistic_fit(X: np.ndarray, y: np.ndarray, l2: float = 1.0, max_iter: int = 100, tol: float = 1e-10) -> tuple[np.ndarray, float, int]:
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
    for it in range(1, max_iter + 1):
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
# answers
# --------------------------------------------------------------------------------------------------

_RUN_NAMES = ("run", "run_id", "system", "name", "tag")
_CORRECT_NAMES = ("correct", "is_correct", "accuracy", "label", "y")


def read_answers(value: Any) -> tuple[pl.DataFrame, str]:
    """Answer correctness: a CSV/TSV file with a header naming the query id (``qid``), the run
    (``run``) and ``correct`` (0/1, true/false) columns (tab-separated when the header holds a tab),
    or a frame with those columns. Each (query, run) at most once.
    """
    from ._io import _QID_NAMES, _pick

    if isinstance(value, pl.DataFrame):
        source = "<answers frame>"
        header = list(value.columns)
        records = [(i + 2, dict(zip(header, [str(x) for x in r]))) for i, r in enumerate(value.iter_rows())]
    elif isinstance(value, (str, os.PathLike)):
        source = str(value)
        p = Path(value)
        if not p.exists():
            raise InputError(f"{source}: no such file (answers)")
        if p.is_dir():
            raise InputError(f"{source}: is a directory, expected an answers file (qid, run, correct)")
        from ._io import _decode, _open_bytes

        text = _decode(_open_bytes(p), source)
        lines = text.splitlines()
        first = next((ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")), None)
        if first is None:
            raise EmptyInputError(f"{source}: the file is empty (expected a header: qid, run, correct)")
        delim = "\t" if "\t" in first else ","
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=delim)
        header = []
        records = []
        for fields in reader:
            lineno = reader.line_num
            if not fields or all(not f.strip() for f in fields) or fields[0].lstrip().startswith("#"):
                continue
            if not header:
                header = [f.strip() for f in fields]
                continue
            if len(fields) != len(header):
                raise FormatError(source, lineno, f"expected {len(header)} fields as in the header, found {len(fields)}", delim.join(fields))
            records.append((lineno, dict(zip(header, (f.strip() for f in fields)))))
    else:
        raise ConfigError(f"answers must be a file path or a polars frame, got {type(value).__name__}")
    qc = _pick(header, _QID_NAMES, "query id", source, True)
    rc = _pick(header, _RUN_NAMES, "run", source, True)
    cc = _pick(header, _CORRECT_NAMES, "correct", source, True)
    qs, rs, ys, lines_of = [], [], [], []
    for lineno, rec in records:
        raw = rec[cc].strip().lower()  # type: ignore[index]
        if raw in ("1", "true", "yes", "1.0"):
            y = 1
        elif raw in ("0", "false", "no", "0.0"):
            y = 0
        else:
            raise FormatError(source, lineno, f"{cc} {rec[cc]!r} is not 0/1 (or true/false)", None)  # type: ignore[index]
        for col in (qc, rc):
            if not rec[col]:  # type: ignore[index]
                raise FormatError(source, lineno, f"{col} is empty", None)
        qs.append(rec[qc])  # type: ignore[index]
        rs.append(rec[rc])  # type: ignore[index]
        ys.append(y)
        lines_of.append(lineno)
    if not qs:
        raise EmptyInputError(f"{source}: no answer rows after the header")
    df = pl.DataFrame({"query_id": pl.Series(qs, dtype=pl.String), "run": pl.Series(rs, dtype=pl.String), "correct": pl.Series(ys, dtype=pl.Int64)})
    dup = df.select(pl.struct("query_id", "run").is_duplicated()).to_series().to_numpy()
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        q, r = qs[i], rs[i]
        same = [lines_of[j] for j in np.flatnonzero(dup).tolist() if qs[j] == q and rs[j] == r][:2]
        raise DuplicateError(f"{source}: query {q!r}, run {r!r} has two answers (lines {same[0]} and {same[1]})")
    return df, source


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

    def render(self, fmt: str = "table") -> str:
        if fmt == "json":
            from ._output import to_json

            return to_json(self.report)
        if fmt != "table":
            raise ConfigError(f"format must be table or json, got {fmt!r}")
        r = self.report
        out = [
            f"fit-udcg: k = {r['k']}, {r['n_observations']} observations ({r['n_queries']} queries x runs {', '.join(r['runs'])}), "
            f"{r['positive_rate']:.1%} answered correctly",
            f"held-out prediction of answer correctness ({r['folds']}-fold over queries, seed {r['seed']}, l2 {r['l2']:g}):",
            f"  {'measure':<22}{'r (point-biserial)':>20}{'AUC':>9}{'fold mean r':>13}{'fold mean AUC':>15}",
        ]
        for name, s in r["held_out"].items():
            def f(x: float | None, d: int = 3) -> str:
                return "NA" if x is None else f"{x:.{d}f}"

            out.append(f"  {name:<22}{f(s['r']):>20}{f(s['auc']):>9}{f(s['fold_mean_r']):>13}{f(s['fold_mean_auc']):>15}")
        fit = self.fit
        out.append(f"fitted on all observations: bias {fit['bias']:.4f}")
        out.append("  rank " + "".join(f"{i + 1:>9}" for i in range(fit["k"])))
        out.append("  alpha" + "".join(f"{a:>9.4f}" for a in fit["alpha"]))
        out.append("  beta " + "".join(f"{b:>9.4f}" for b in fit["beta"]))
        from ._utility import describe_lines

        out.extend(describe_lines(r["utility"]))
        out.extend(f"note: {n}" for n in r["notes"])
        if r.get("output"):
            out.append(f"weights written to {r['output']}; evaluate with -m \"UDCG-pos(fit='{r['output']}')@{r['k']}\"")
        return "\n".join(out) + "\n"


def _nan_none(x: float) -> float | None:
    return None if x is None or math.isnan(x) else float(x)


def fit_udcg(
    qrels: Any,
    runs: Any,
    answers: Any,
    k: int = 5,
    *,
    folds: int = 5,
    seed: int = 0,
    l2: float = 1.0,
    utility_map: Any = None,
    distractors: Any = None,
    utilities: Any = None,
    distractor_rules: Any = "default",
    tau: float | None = None,
    top_rank: int | None = None,
    penalty: float | None = None,
    grade_map: Any = None,
    ties: str = "trec",
    missing: str = "zero",
    duplicates: str = "error",
    llm_threshold: float | None = None,
) -> FitResult:
    """Fit the positional UDCG's α, β, b to answer correctness; compare it held-out with UDCG@k, nDCG@k
    and RA-nWG@k (see the module docstring). Runs are matched to the answers' ``run`` column by name."""
    from ._data import Qrels, Run
    from ._engine import prepare
    from ._evaluate import _unique_names
    from ._measures import make
    from ._pool import check_scale, coerce_grade_map
    from ._utility import UtilityConfig, attach_utilities

    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(f"k must be a whole number >= 1, got {k!r}")
    if isinstance(folds, bool) or not isinstance(folds, int) or folds < 2:
        raise ConfigError(f"folds must be a whole number >= 2, got {folds!r}")
    qr = Qrels.coerce(qrels, duplicates=duplicates)
    run_list = list(runs) if isinstance(runs, (list, tuple)) else [runs]
    if not run_list:
        raise ConfigError("fit-udcg needs at least one run")
    run_objs = [Run.coerce(r, duplicates=duplicates) for r in run_list]
    ans, ans_src = read_answers(answers)
    config = UtilityConfig.resolve(utility_map, distractors, utilities, distractor_rules, tau, top_rank, penalty, llm_threshold)
    gm = coerce_grade_map(grade_map)
    names = _unique_names(run_objs)
    known_runs = sorted(set(ans["run"].to_list()))
    missing_runs = [n for n in names if n not in known_runs]
    if missing_runs:
        raise ConfigError(f"{ans_src}: no answers for run(s) {missing_runs}; its run column holds {known_runs}")
    notes: list[str] = []
    measures = {"UDCG": make("UDCG", None, k), "nDCG": make("nDCG", None, k), "RA-nWG": make("RA-nWG", None, k)}
    X_parts, y_parts, q_parts, base_parts = [], [], [], {name: [] for name in measures}
    ragnwg_ok = True
    for run, name in zip(run_objs, names):
        data = prepare(qr, run, ties=ties, missing=missing, grade_map=gm, keep_frame=True)
        urows = attach_utilities(data, config, qr)
        X = features(data.r_off, urows.u_direct, k)
        sub = ans.filter(pl.col("run") == name)
        lookup = dict(zip(sub["query_id"].to_list(), sub["correct"].to_list()))
        have = np.array([q in lookup for q in data.qids], dtype=bool)
        if (~have).any():
            notes.append(f"{name}: {int((~have).sum())} evaluated queries have no answer row (left out)")
        extra = len(set(lookup) - set(data.qids))
        if extra:
            notes.append(f"{name}: {extra} answer rows name queries that are not evaluated (not in the qrels or the run; left out)")
        X_parts.append(X[have])
        y_parts.append(np.array([lookup[q] for q, h in zip(data.qids, have) if h], dtype=np.float64))
        q_parts.append([q for q, h in zip(data.qids, have) if h])
        for key, m in measures.items():
            if key == "RA-nWG":
                try:
                    check_scale(data, [m])
                except ConfigError:
                    ragnwg_ok = False
                    base_parts[key].append(np.full(int(have.sum()), np.nan))
                    continue
            base_parts[key].append(m.compute(data)[have])
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
    scores = {f"UDCG-pos@{k} (fitted)": oof, f"UDCG@{k}": base["UDCG"], f"nDCG@{k}": base["nDCG"], f"RA-nWG@{k}": base["RA-nWG"]}
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
        "notes": notes,
        "output": None,
    }
    return FitResult(fit, report)
