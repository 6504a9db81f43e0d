"""A small corpus with a planted truth, for the retriever tests (``tests/extras/test_<framework>.py``):
two indexes of it, compared end to end, give an answer known before any retriever runs.

Twelve topics, each named by two made-up words that occur in no other topic. Topic i's question asks
about its two words; its one relevant passage ``rel-i`` holds each word once among eight filler words.
The **clean** index holds the relevant passages and ten filler passages (filler words only). The
**polluted** index holds the same plus, for the first eight topics, a distractor ``dis-i``: the two
words twice each among two filler words. Every BM25 variant ranks a passage with each query word
twice in a shorter text above one with each once in a longer text (term frequency up, length down,
the same document frequency), and a passage without a query word below both. So, with the relevant
passage as the reference:

* clean: ``rel-i`` first for every question: RR = P@1 = 1;
* polluted: ``dis-i`` first, ``rel-i`` second for topics 0-7, ``rel-i`` first for 8-11:
  RR = (8 * 1/2 + 4) / 12 = 2/3, P@1 = 4/12 = 1/3;
* both hold ``rel-i`` in their top 2: ContextRecall@2 = 1 for both, no difference;
* compare: RR and P@1 are worse for polluted on 8 questions and equal on 4 (the randomization test
  over 8 non-zero differences of one sign gives p = 2/2^8 = 0.0078 up to its resampling); ContextRecall@2
  ties on all 12 (p = 1).

Question words outside the topic words (``how``, ``is``, ``the``, ``configured``) occur in no passage,
so no tokenizer or stop list changes which passages match.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

TOPIC_WORDS = [
    ("zorvane", "kelbrit"), ("quillon", "marpesh"), ("tavrine", "olcott"), ("brenwick", "sulvane"),
    ("drossel", "pintrow"), ("felgard", "yarrowin"), ("gormast", "hublett"), ("jexmoor", "nandrel"),
    ("lumbrev", "oskarth"), ("prandel", "vistrom"), ("wexholm", "zimbrel"), ("corvath", "elmquist"),
]  # fmt: skip
FILLER = [
    "river", "stone", "market", "winter", "garden", "copper", "lantern", "harbor", "meadow", "violin",
    "orchard", "pebble", "candle", "forest", "window", "saddle", "marble", "thunder", "velvet", "anchor",
]  # fmt: skip
POLLUTED_TOPICS = 8
TOPICS = len(TOPIC_WORDS)

#: the planted figures (see the module docstring)
EXPECTED = {
    "clean": {"RR": 1.0, "P@1": 1.0, "ContextRecall@2": 1.0},
    "polluted": {"RR": (8 * 0.5 + 4) / 12, "P@1": 4 / 12, "ContextRecall@2": 1.0},
}


def _filler(seed: int, n: int) -> list[str]:
    return [FILLER[(seed * 7 + j * 3) % len(FILLER)] for j in range(n)]


def passages(index: str) -> list[dict[str, Any]]:
    """The passages of the ``clean`` or ``polluted`` index: ``{id, text, metadata}``."""
    out = []
    for i, (a, b) in enumerate(TOPIC_WORDS):
        words = _filler(i, 8)
        text = " ".join([*words[:3], a, *words[3:6], b, *words[6:]])
        out.append({"id": f"rel-{i:02d}", "text": text, "metadata": {"kind": "relevant", "topic": i}})
    for j in range(10):
        out.append({"id": f"fill-{j:02d}", "text": " ".join(_filler(20 + j, 10)), "metadata": {"kind": "filler"}})
    if index == "polluted":
        for i, (a, b) in enumerate(TOPIC_WORDS[:POLLUTED_TOPICS]):
            w = _filler(40 + i, 2)
            text = f"{a} {w[0]} {b} {a} {w[1]} {b}"
            out.append({"id": f"dis-{i:02d}", "text": text, "metadata": {"kind": "distractor", "topic": i}})
    for line, p in enumerate(out, start=1):
        p["metadata"]["line"] = line
    return out


def questions() -> list[dict[str, Any]]:
    """One record per topic: its id, its question and its relevant passage's id and text."""
    rel = {p["id"]: p["text"] for p in passages("clean")}
    return [
        {
            "query_id": f"t{i:02d}",
            "question": f"how is the {a} {b} configured",
            "reference_ids": [f"rel-{i:02d}"],
            "reference_contexts": [rel[f"rel-{i:02d}"]],
        }
        for i, (a, b) in enumerate(TOPIC_WORDS)
    ]


def write(folder: Path) -> dict[str, Path]:
    """The two indexes' passages and the questions as JSON-lines files in ``folder`` (what a user has)."""
    paths = {}
    for name, rows in (("clean", passages("clean")), ("polluted", passages("polluted")), ("questions", questions())):
        paths[name] = folder / f"{name}.jsonl"
        paths[name].write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return paths


def read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def check_planted(clean: Any, polluted: Any) -> None:
    """collect's two sample sets give the planted figures through ctxeval's evaluate and compare."""
    import ctxeval

    measures = list(EXPECTED["clean"])
    result = ctxeval.evaluate(samples=[clean, polluted], measures=measures)
    for run, name in zip(result.runs, ("clean", "polluted")):
        for m, want in EXPECTED[name].items():
            assert abs(run.mean(m) - want) < 1e-12, (name, m, run.mean(m), want)
    report = ctxeval.compare(None, None, measures, samples=[clean, polluted])
    rows = {c["measure"]: c for c in report.to_dict()["comparisons"]}
    for m in ("RR", "P@1"):
        assert (rows[m]["wins"], rows[m]["ties"], rows[m]["losses"]) == (0, 4, 8), rows[m]
        assert rows[m]["significant"] and rows[m]["p_value"] < 0.02, rows[m]
    assert (rows["ContextRecall@2"]["ties"], rows["ContextRecall@2"]["p_value"]) == (12, 1.0)
    assert not rows["ContextRecall@2"]["significant"]


def collect_both(build: Callable[[Path], Any], folder: Path, k: int) -> tuple[dict[str, Path], list[Any], list[Any]]:
    """The corpus written to ``folder``, a retriever of each index (``build(passages_path)``), the
    questions collected from each at ``k`` (named ``clean`` and ``polluted``) and their planted figures
    checked: (the files, the two retrievers, the two sample sets)."""
    import ctxeval

    files = write(folder)
    retrievers = [build(files["clean"]), build(files["polluted"])]
    found = [ctxeval.collect(r, files["questions"], k=k, name=n) for r, n in zip(retrievers, ("clean", "polluted"))]
    check_planted(*found)
    return files, retrievers, found
