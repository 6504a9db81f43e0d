"""What every chunker extra's test checks (``tests/extras/test_<extra>.py``): the framework's chunker,
given to ``ctxeval.chunking`` beside ctxeval's own ``tokens:64`` on the planted corpus
(``ctxeval._planted_chunks``), gives chunks whose offsets were read from the framework (none located by
search) and hold exactly the document's text at them; the verb runs offline end to end."""

from __future__ import annotations

from typing import Any

import ctxeval
from ctxeval._io.chunkers import chunk_corpus
from ctxeval._planted_chunks import chunking_corpus


def corpus(n: int = 12) -> tuple[dict[str, str], Any, dict[str, str]]:
    docs, questions, spans = chunking_corpus()
    keep = sorted(docs)[:n]
    labels = ctxeval.SpanLabels.from_records([s for s in spans if s["doc_id"] in keep])
    texts = {q["query_id"]: q["question"] for q in questions if q["query_id"] in labels.query_ids}
    return {d: docs[d] for d in keep}, labels, texts


def offsets_read(chunker: Any, n: int = 12) -> ctxeval.Chunks:
    """The chunk table of ``chunker`` over the corpus, every chunk placed by the framework's offsets."""
    docs, _, _ = corpus(n)
    table = chunk_corpus(chunker, docs)
    assert "by offsets" in table.notes[0] and "search" not in table.notes[0], table.notes
    for t, d, s, e in zip(table.chunk_texts(), table.doc.tolist(), table.start.tolist(), table.end.tolist()):
        assert docs[d][s:e] == t and e > s
    return table


def verb_runs(chunker: Any, name: str) -> ctxeval.ChunkingReport:
    """``ctxeval.chunking`` with the chunker beside tokens:64: a verdict at every budget, the chunker's
    precision_Omega printed."""
    docs, labels, texts = corpus()
    rep = ctxeval.chunking(
        docs, labels, {name: chunker, "tokens64": "tokens:64"}, questions=texts, budgets=[64, 512],
        stats={"permutations": 500, "resamples": 200},
    )  # fmt: skip
    assert [v.budget for v in rep.verdicts] == [64, 512]
    row = next(c for c in rep.chunkers if c.name == name)
    assert row.chunks > 0 and 0 < row.precision_omega <= 1
    assert "P_Omega" in str(rep)
    return rep
