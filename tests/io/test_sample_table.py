"""The field table is the one description of the sample format: every attribute of a sample is a row
of it or says how the reader works it out, no name is read as two fields, and what used to be listed
by hand beside the reader (the CSV cells, the columnar reader's fields) is what the table gives."""

from __future__ import annotations

import dataclasses

from ctxeval import Samples
from ctxeval._io.samples import fast
from ctxeval._io.samples.fields import CHUNKS, FIELDS, JSON_CELLS, KEPT, ROWS, Sample

#: the lists kept beside the reader before the table (files.JSON_CELLS, fast._FIELDS), and the fields added since
HAND_CELLS = {
    "retrieved", "retrieved_ids", "retrieved_context_ids", "retrieved_contexts", "contexts", "retrieved_scores",
    "retrieved_meta", "reference_ids", "reference_context_ids", "reference_contexts", "grades", "facets", "nuggets",
    "citations", "citations_undecided", "citations_tied", "citations_not_sent", "pool", "claims", "judged",
    "labelled_by",
}  # fmt: skip
HAND_FAST = {"query_id", "question", "category", "retrieved_ids", "retrieved_scores", "reference_ids", "grades"}
ADDED = {"retrieved_documents", "retrieved_starts", "retrieved_ends"}


def test_every_attribute_is_a_row_or_worked_out() -> None:
    for f in dataclasses.fields(Sample):
        assert ("row" in f.metadata) != ("derived" in f.metadata), f.name
    assert [r.attr for r in ROWS] == [f.name for f in dataclasses.fields(Sample) if "row" in f.metadata]
    names = [n for r in (*ROWS, *KEPT) for n in r.names]
    assert len(names) == len(set(names)), "a name read as two fields"
    assert CHUNKS[0].attr == "retrieved_ids" and all(r.key is not None for r in CHUNKS)


def test_what_was_listed_by_hand_is_what_the_table_gives() -> None:
    """Every name once listed by hand is read as before (a field added later is a row of the table,
    reached by the strategy of tests/io/test_sample_format.py: no list here to keep up)."""
    assert HAND_CELLS | ADDED <= JSON_CELLS
    assert HAND_FAST <= fast._FIELDS
    scalars = {"qid", "id", "user_input", "reference_answer", "reference", "ground_truth", "response", "answer"}
    by_hand = HAND_CELLS | HAND_FAST | ADDED | scalars | {"claims_status", "nuggets_status"}
    assert by_hand <= FIELDS
    later = {
        n for r in ROWS for n in r.names
    } - by_hand  # the rows added since the table: cells and fast fields as declared
    assert later >= JSON_CELLS - HAND_CELLS - ADDED and later >= fast._FIELDS - HAND_FAST


def test_each_row_is_written_under_its_name() -> None:
    """One sample giving every field as a list where it can: each row comes back under its first name."""
    rec = {
        "query_id": "q1", "question": "q?", "retrieved_ids": ["a", "b"], "retrieved_contexts": ["x", "y"],
        "retrieved_scores": [2.0, 1.0], "retrieved_documents": ["d", "d"], "retrieved_starts": [0, 1],
        "retrieved_ends": [1, 2], "reference_ids": ["a"], "grades": {"a": 2}, "reference_contexts": ["x"],
        "reference_answer": "r", "response": "s", "category": "c", "facets": [{"name": "f", "ids": ["a"]}],
        "citations": ["a"], "nuggets": [{"text": "n", "importance": "vital", "supported_by": ["a"],
        "partially_supported_by": [], "undecided": []}], "pool": ["a", "b", "z"],
        "claims": [{"text": "c", "supported_by": ["b"], "undecided": []}], "judged": {"relevant": ["a"], "undecided": []},
        "labelled_by": [{"judge": "lexical", "model": "m", "heuristic": True, "task": "claims"}],
        "claims_status": "ok", "citations_tied": ["b"],
    }  # fmt: skip
    s = Samples.from_records([rec])
    assert not any("no measure reads" in n for n in s.notes)
    written = s.to_records()[0]
    assert written == rec
    assert list(written) == [*(r.name for r in ROWS if r.name in rec), "claims_status", "citations_tied"]
