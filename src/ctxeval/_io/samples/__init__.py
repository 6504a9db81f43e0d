"""Sample sets: RAG evaluation without TREC files, and the one home of the sample format.

Most RAG teams hold, per question, the chunks their pipeline retrieved and some of: the ids of the
reference chunks, graded ids, the reference texts, the reference answer. A *sample set* is that, one
sample per query, read from JSON lines (one object per line), CSV / TSV, Parquet, a list of dicts, or
a pandas / polars frame; each sample set is one run of a pipeline, its references the judgments.

* :mod:`.fields`: the field table, :class:`~.fields.Sample` (every field's names, shape, meaning and
  reader; the format reference is made from it), with :mod:`.shapes` (each shape's check and
  writing), :mod:`.reader` (the checks, their errors, the edge readings) and :mod:`.chunks` (the
  retrieved chunks, as objects or parallel lists);
* :mod:`.schema`: a sample object read (:func:`~.schema.parse`) and written (:func:`~.schema.record`)
  by the table;
* :mod:`.files`: files and frames to sample objects and back (JSON lines, CSV, Parquet, frames);
* :mod:`.sets`: :class:`~.sets.Samples`, the set: reading, writing, its notes, and its views as
  qrels, a run, a pool;
* :mod:`.notes`: what reading a set met, said once;
* :mod:`.across`: several sets read together: paired by query (or by question), their references
  compared, their judgments united;
* :mod:`.fast`: the columnar reader of plain JSON-lines files (a fast path, never a second definition).
"""

from __future__ import annotations

from .across import differing_references, mismatch_notes, pair_by_question, union_qrels
from .fields import FIELDS, Sample
from .schema import parse, record, text_id
from .sets import PLACEHOLDER, Samples

__all__ = [
    "FIELDS",
    "PLACEHOLDER",
    "Sample",
    "Samples",
    "differing_references",
    "mismatch_notes",
    "pair_by_question",
    "parse",
    "record",
    "text_id",
    "union_qrels",
]
