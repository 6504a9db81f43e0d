"""Hypothesis strategies shared by the tests: runs and qrels as polars frames, with ids whose numeric
and byte-wise orders differ, scores equal in float32 but not in float64, plain ties, repeated pairs."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import polars as pl
from hypothesis import strategies as st

__all__ = ["DOCS", "QIDS", "SCORES", "cases", "pair_frames"]

# ids whose numeric and byte-wise orders differ, with a shared prefix, and non-ASCII
QIDS = ["1", "2", "10", "q", "q1", "é"]
DOCS = ["a", "b", "c", "d10", "d9", "D", "ä", "zz"]
# scores equal in float32 but not in float64, and plain ties
SCORES = [0.5, 1.0, 1.0 + 1e-9, 2.0, 2.0, 3.25]


@st.composite
def cases(draw: st.DrawFn) -> tuple[pl.DataFrame, pl.DataFrame, str]:
    run_q = draw(st.lists(st.sampled_from(QIDS), unique=True, max_size=5))
    rows: list[tuple[str, str, float]] = []
    for q in run_q:
        docs = draw(st.lists(st.sampled_from(DOCS), unique=True, min_size=1, max_size=len(DOCS)))
        seg = [(q, d, draw(st.sampled_from(SCORES))) for d in docs]
        rows.append(seg)  # type: ignore[arg-type]
    layout_kind = draw(st.sampled_from(["ranked", "grouped", "shuffled"]))
    rnd = random.Random(draw(st.integers(0, 10**6)))
    flat: list[tuple[str, str, float]] = []
    for seg in rows:  # type: ignore[assignment]
        seg = list(seg)  # type: ignore[arg-type]
        if layout_kind == "ranked":
            rnd.shuffle(seg)
            seg.sort(key=lambda r: -np.float32(r[2]))  # score order, ties in random order
        else:
            rnd.shuffle(seg)
        flat.extend(seg)
    if layout_kind == "shuffled":
        rnd.shuffle(flat)
    qrel_q = draw(st.lists(st.sampled_from(QIDS), unique=True, min_size=1, max_size=5))
    qrows = []
    for q in qrel_q:
        docs = draw(st.lists(st.sampled_from(DOCS), unique=True, min_size=1, max_size=4))
        qrows.extend((q, d, draw(st.integers(-1, 3))) for d in docs)
    if draw(st.booleans()):
        rnd.shuffle(qrows)
    if not flat:
        flat = [("zzz", "a", 1.0)]
    run = pl.DataFrame(flat, schema={"query_id": pl.String, "doc_id": pl.String, "score": pl.Float64}, orient="row")
    qrels = pl.DataFrame(
        qrows, schema={"query_id": pl.String, "doc_id": pl.String, "relevance": pl.Int64}, orient="row"
    )
    return run, qrels, draw(st.sampled_from(["zero", "ignore"]))


@st.composite
def pair_frames(draw: st.DrawFn) -> pl.DataFrame:
    n_q = draw(st.integers(1, 6))
    rows = []
    for q in range(n_q):
        k = draw(st.integers(1, 7))
        docs = draw(st.lists(st.sampled_from(DOCS), min_size=k, max_size=k))  # may repeat
        rows.extend((str(q), d) for d in docs)
    if draw(st.booleans()):
        random.Random(draw(st.integers(0, 10**6))).shuffle(rows)
    return pl.DataFrame(rows, schema={"query_id": pl.String, "doc_id": pl.String}, orient="row")


# --- sample records: every field of the sample format, in every form the reader takes ------------------

#: chunk ids: byte order differs from numeric, non-ASCII, whole numbers (read as their text)
SAMPLE_IDS = st.one_of(st.sampled_from(["a", "b", "c10", "c9", "é", "雪", "x y"]), st.integers(0, 12))
#: texts: any Unicode, a lone surrogate now and then (read as U+FFFD), empty ones
SAMPLE_TEXTS = st.one_of(
    st.text(max_size=12),
    st.builds(lambda a, b: a + "\ud800" + b, st.text(max_size=4), st.text(max_size=4)),
    st.sampled_from(["", "[draft] a", "{x}", "same text"]),
)
_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)
_EXTRA_NAMES = st.sampled_from(["latency_ms", "metadata", "pipeline_version", "run_tag", "zzz"])


def _open_ones(refs: st.SearchStrategy[list[Any]]) -> st.SearchStrategy[dict[str, list[Any]]]:
    """The ids a judge left without a judgment for a reason other than undecided (written when any)."""
    return st.fixed_dictionaries({}, optional={"tied": refs, "not_sent": refs})


def _named(draw: st.DrawFn, names: tuple[str, ...]) -> str:
    return draw(st.sampled_from(names))


def _places(n: int) -> st.SearchStrategy[list[tuple[Any, int, int]]]:
    """Where ``n`` chunks lie: (document, start, end), offsets in code points, end exclusive."""
    place = st.tuples(SAMPLE_IDS, st.integers(0, 10**6), st.integers(0, 500)).map(lambda t: (t[0], t[1], t[1] + t[2]))
    return st.lists(place, min_size=n, max_size=n)


@st.composite
def sample_records(draw: st.DrawFn, i: int = 0, csv: bool = False) -> dict:
    """One valid sample object using any of the format's fields and names. ``csv``: values CSV can hold
    (no empty text for a scalar field, extra fields as text or JSON arrays/objects)."""
    texts = SAMPLE_TEXTS.filter(bool) if csv else SAMPLE_TEXTS
    rec: dict = {}
    rec[_named(draw, ("query_id", "qid", "id"))] = draw(st.sampled_from([f"q{i}", i, f"é{i}"]))
    n = draw(st.integers(0, 5))
    ids = draw(st.lists(SAMPLE_IDS, min_size=n, max_size=n, unique_by=str))
    chunk_texts = draw(st.lists(SAMPLE_TEXTS, min_size=n, max_size=n))
    scores = draw(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=n, max_size=n))
    if draw(st.booleans()):
        scores.sort(reverse=True)
    form = draw(st.sampled_from(["objects", "ids", "parallel", "texts"]))
    if form == "objects":
        by_text = draw(st.booleans())
        items = []
        for j, d in enumerate(ids):
            item: dict = {}
            if by_text and chunk_texts[j]:
                item["text"] = chunk_texts[j] + f"#{j}"  # distinct texts
            else:
                item["id"] = d
                if draw(st.booleans()):
                    item["text"] = chunk_texts[j]
            if draw(st.booleans()):
                item["source"] = draw(st.text(max_size=4))
            items.append(item)
        if items and draw(st.booleans()):
            for item, s in zip(items, scores):
                item["score"] = s
        if items and draw(st.booleans()):
            for item, (d, start, end) in zip(items, draw(_places(n))):
                item.update(document=d, start=start, end=end)
        rec["retrieved"] = items
    elif form == "ids":
        rec["retrieved"] = ids
    else:
        if form == "parallel":
            rec[_named(draw, ("retrieved_ids", "retrieved_context_ids"))] = ids
        if form == "parallel" and draw(st.booleans()):
            rec[_named(draw, ("retrieved_contexts", "contexts"))] = chunk_texts
        if form == "texts":
            rec[_named(draw, ("retrieved_contexts", "contexts"))] = [t + f"#{j}" for j, t in enumerate(chunk_texts)]
        if draw(st.booleans()):
            rec["retrieved_scores"] = scores
        if draw(st.booleans()):
            places = draw(_places(n))
            for name, values in zip(("retrieved_documents", "retrieved_starts", "retrieved_ends"), zip(*places)):
                rec[name] = list(values)
            if not places:
                rec.update(retrieved_documents=[], retrieved_starts=[], retrieved_ends=[])
    refs = st.lists(SAMPLE_IDS, max_size=4)
    if draw(st.booleans()):
        rec[_named(draw, ("reference_ids", "reference_context_ids"))] = draw(refs)
    if draw(st.booleans()):
        rec["grades"] = draw(st.dictionaries(SAMPLE_IDS.map(str), st.integers(-2, 5), max_size=4))
    if draw(st.booleans()):
        rec["reference_contexts"] = draw(st.lists(SAMPLE_TEXTS, max_size=3))
    for names in (
        ("question", "user_input"),
        ("reference_answer", "reference", "ground_truth"),
        ("response", "answer"),
        ("category",),
        ("claims_status",),
        ("nuggets_status",),
    ):
        if draw(st.booleans()):
            rec[_named(draw, names)] = draw(texts)
    if draw(st.booleans()):
        rec["pool"] = draw(refs)
    if draw(st.booleans()):
        rec["citations"] = draw(refs)
    for name in ("citations_undecided", "citations_tied", "citations_not_sent"):
        if draw(st.booleans()):
            rec[name] = draw(refs)
    if draw(st.booleans()):
        rec["facets"] = [{"name": draw(texts), "ids": draw(refs)} for _ in range(draw(st.integers(0, 2)))]
    if draw(st.booleans()):
        rec["nuggets"] = [
            {
                "text": draw(texts),
                "importance": draw(st.sampled_from(["vital", "okay"])),
                "supported_by": draw(refs),
                "partially_supported_by": draw(refs),
                "undecided": draw(refs),
                **draw(_open_ones(refs)),
            }
            for _ in range(draw(st.integers(0, 2)))
        ]
    if draw(st.booleans()):
        rec["claims"] = [
            {"text": draw(texts), "supported_by": draw(refs), "undecided": draw(refs), **draw(_open_ones(refs))}
            for _ in range(draw(st.integers(0, 2)))
        ]
    if draw(st.booleans()):
        rec["judged"] = {"relevant": draw(refs), "undecided": draw(refs), **draw(_open_ones(refs))}
    if draw(st.booleans()):
        rec["labelled_by"] = [
            {"judge": draw(st.text(max_size=4)), "model": "m", "heuristic": draw(st.booleans()), "task": "claims"}
        ]
    for name in draw(st.lists(_EXTRA_NAMES, max_size=2, unique=True)):
        if csv:
            rec[name] = draw(
                st.one_of(
                    st.text(min_size=1, max_size=6).filter(lambda t: t.lstrip()[:1] not in ("[", "{")),
                    st.lists(st.text(max_size=3), max_size=2),
                    st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2),
                )
            )
        else:
            rec[name] = draw(_JSON)
    return rec


def csv_safe(rec: dict) -> dict:
    """A sample record without the values CSV cannot tell apart from others: a scalar field's empty
    text (an empty cell is no value), an extra field's number or boolean (CSV holds text)."""

    def text_only(v: object) -> bool:
        if isinstance(v, list):
            return all(map(text_only, v))
        if isinstance(v, dict):
            return all(map(text_only, v.values()))
        return v is None or isinstance(v, str)

    extra = ("latency_ms", "metadata", "pipeline_version", "run_tag", "zzz")
    return {
        k: v
        for k, v in rec.items()
        if not (isinstance(v, str) and v == "")
        and not (k in extra and (not isinstance(v, (list, dict)) or not text_only(v)))
    }
