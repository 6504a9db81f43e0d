"""Shared cases of the distraction-aware tests: the hand example, graded cases, helpers."""

from __future__ import annotations

import math
from pathlib import Path

from hypothesis import strategies as st

from ctxeval import Qrels, Run, evaluate
from ctxeval._context.utility import UtilityConfig, row_utilities
from ctxeval._session import prepare
from flat import grouped

EXAMPLE = Path(__file__).resolve().parents[1] / "src" / "ctxeval" / "data" / "example"


def sig(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def rows_for(qrels: dict, run: dict, config: UtilityConfig | None = None, **kw: object):
    qr = Qrels.from_dict(qrels)
    data = prepare(qr, Run.from_dict(run), keep_rows=True, extras=["grades"], **grouped(**kw))  # type: ignore[arg-type]
    return data, row_utilities(data, config, qr)


def means(qrels: dict, run: dict, names: list[str], **kw: object) -> dict[str, float]:
    res = evaluate(qrels, run, names, **grouped(**kw))
    # by position: a measure naming a fit file is keyed by the fit's content hash in the result
    return {name: res.runs[0].mean(m) for name, m in zip(names, res.measures)}


# --- the hand calculation of the issue ------------------------------------------------------------------

# Ranks 1-5 hold grades 5, 3, 2, 4, 2 with scores 1.0 .. 0.3, so relative scores (s - 0.3) / 0.7 = 1, .857, .286, .143, 0.
# Default rules (tau 0.7, top_rank 3, penalty -0.5):
#   rank 1 grade 5 -> 1;  rank 2 grade 3 -> 0.5;  rank 3 grade 2 (utility 0, relative score .286 < 0.7,
#   judged, rank 3 <= 3) -> hard negative -0.5;  rank 4 grade 4 -> 1;  rank 5 grade 2 (0 < 0.7, rank 5 > 3) -> 0.
# An unretrieved grade-5 doc "x5" belongs to the ideal.
HAND_QRELS = {"q": {"a": 5, "b": 3, "c": 2, "d": 4, "e": 2, "x5": 5}}
HAND_RUN = {"q": {"a": 1.0, "b": 0.9, "c": 0.5, "d": 0.4, "e": 0.3}}


def released_udcg(passages: list[dict], w_rel: float = 1.0, w_irr: float = -1 / 3) -> float:
    """The released compute_udcg_score, re-written from its description (../shared/notes): one mean
    over all passages, a passage with a missing score or label skipped in the sum but counted."""
    if len(passages) == 0:
        return 0.0
    total = 0.0
    for p in passages:
        if p.get("score") is None or p.get("is_relevant") is None:
            continue
        total += (w_rel if p["is_relevant"] else w_irr) * p["score"]
    return 1.0 / (1.0 + math.exp(-total / len(passages)))


@st.composite
def graded_case(draw: st.DrawFn) -> tuple[dict, dict, dict]:
    n_q = draw(st.integers(1, 3))
    qrels: dict = {}
    run: dict = {}
    llm: dict = {}
    for qi in range(n_q):
        docs = [f"d{i}" for i in range(draw(st.integers(1, 8)))]
        judged = draw(st.lists(st.sampled_from(docs), unique=True, min_size=1))
        qrels[f"q{qi}"] = {d: draw(st.integers(1, 5)) for d in judged}
        retrieved = draw(st.lists(st.sampled_from(docs), unique=True))
        if retrieved:
            run[f"q{qi}"] = {d: float(draw(st.integers(-3, 10))) for d in retrieved}
        with_u = draw(st.lists(st.sampled_from(docs), unique=True))
        if with_u:
            llm[f"q{qi}"] = {d: draw(st.sampled_from([0.0, 0.125, 0.5, 0.75, 1.0])) for d in with_u}
    if not run:
        run["q0"] = {"d0": 1.0}
    if not llm:
        llm["q0"] = {"d0": 0.5}
    return qrels, run, llm


LO, HI = sig(-1 / 3), sig(1.0)
