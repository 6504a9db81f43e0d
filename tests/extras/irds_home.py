"""A local ir_datasets home (``IR_DATASETS_HOME``) holding the files ir_datasets' own loading code reads
for ``msmarco-passage/trec-dl-2019`` and ``beir/scifact``, where it keeps them after a download: built
from the bundled example (its passages, its queries plus two unjudged ones, its qrels) and from a few
lines in the layout BEIR publishes. Used by tests/extras/test_irds.py and tests/io/test_irds_engines.py."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import ctxeval

EXAMPLE = Path(ctxeval.__file__).parent / "data" / "example"
DL19 = "irds:msmarco-passage/trec-dl-2019/judged"

UNJUDGED = {"q98": "an unjudged question about tea", "q99": "another unjudged question"}
SCIFACT = {
    "corpus": [
        {
            "_id": "4983",
            "title": "Microstructural development",
            "text": "Alterations of the architecture of white matter.",
        },
        {"_id": "5836", "title": "Induction of myelodysplasia", "text": "Myelodysplastic syndromes are disorders."},
        {"_id": "7912", "title": "BC1 RNA", "text": "BC1 RNA is a neural non-protein-coding RNA."},
    ],
    "queries": [
        {"_id": "1", "text": "0-dimensional biomaterials show inductive properties.", "metadata": {}},
        {"_id": "3", "text": "1,000 genomes project enables mapping of genetic sequence variation.", "metadata": {}},
        {"_id": "5", "text": "1/2000 in UK have abnormal PrP positivity.", "metadata": {}},
    ],
    "test": [("1", "4983", 1), ("1", "7912", 1), ("3", "5836", 1)],
    "train": [("5", "7912", 1)],
}


def build(home: Path) -> None:
    """The files ir_datasets reads for msmarco-passage/trec-dl-2019 and beir/scifact, where it keeps them."""
    mp = home / "msmarco-passage"
    (mp / "trec-dl-2019").mkdir(parents=True)
    (mp / "irds_version.txt").write_text("v2")  # the collection's format version (else it is rebuilt)
    passages = [json.loads(x) for x in (EXAMPLE / "passages.jsonl").read_text().splitlines()]
    (mp / "collection.tsv").write_text("".join(f"{p['doc_id']}\t{p['text']}\n" for p in passages))
    queries = [json.loads(x) for x in (EXAMPLE / "queries.jsonl").read_text().splitlines()]
    rows = [(q["qid"], q["text"]) for q in queries] + list(UNJUDGED.items())
    (mp / "trec-dl-2019" / "queries.tsv").write_text("".join(f"{q}\t{t}\n" for q, t in rows))
    (mp / "trec-dl-2019" / "qrels").write_text((EXAMPLE / "qrels.txt").read_text())
    sf = home / "beir" / "scifact"
    sf.mkdir(parents=True)
    with zipfile.ZipFile(sf / "source.zip", "w") as z:
        z.writestr("scifact/corpus.jsonl", "".join(json.dumps(d) + "\n" for d in SCIFACT["corpus"]))
        z.writestr("scifact/queries.jsonl", "".join(json.dumps(q) + "\n" for q in SCIFACT["queries"]))
        for split in ("test", "train"):
            lines = "".join(f"{q}\t{d}\t{g}\n" for q, d, g in SCIFACT[split])
            z.writestr(f"scifact/qrels/{split}.tsv", "query-id\tcorpus-id\tscore\n" + lines)
