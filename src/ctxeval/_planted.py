"""A RAG corpus with a planted truth, written three ways (reference ids, graded judgments, RAGAS text-only
files): the RAG guide's two pipelines (``ctxeval demo --samples DIR`` writes them) and the journey
test's data. Nothing here calls the rest of ctxeval: the truth comes from how the data are made (the
tests compare what ctxeval computes with the truth written out here).

Every query q has a topic of its own; its question asks about three topic words. Its chunks:

* **relevant** R1, R2, R3: hold the three question words and the answer (graded 5, 4, 4);
* **planted distractors** D1, D2: hold the three question words and a wrong answer (grade 1): plausible,
  and harmful to an LLM reader;
* **fillers** F1..F4: on the topic (one question word), no answer (grade 2);
* **off-topic** O1..O6: another vocabulary, never judged (unlabelled in every expression).

Two pipelines retrieve 10 chunks per query, scored 1.0, 0.9, ..., 0.1 down the list:

* **good** (the better system): ``R1 R2 R3 D1 F1 D2 O1 F2 O2 O3`` for every query;
* **weak**: by the query's class (its first-stage candidates, ``pool``, 20 deep):

  - *healthy* (``H``): ``R1 D1 D2 R2 R3 F1 F2 O1 O2 O3``; the pool holds every relevant chunk;
  - *selection failure* (``S``, a reranking failure): ``D1 D2 R1 F1 F2 O1 R2 R3 O2 O3``: the pool held
    R2 and R3, the reranker put them below K = 5;
  - *retrieval failure* (``Rt``): ``D1 D2 R1 F1 F2 O1 O2 O3 O4 O5``: the pool never held R2 and R3.

So, at K = 5 (the slots the LLM reads), with a ``-k 3`` distraction view:

* recall@5: good 1; weak 1 (H), 1/3 (S, Rt); RR: good 1, weak 1 (H), 1/3 (S, Rt);
* diagnose (weak, K = 5): H healthy, S selection, Rt retrieval; with 18 S against 6 Rt an exact sign
  test names the selection stage (p = 0.023);
* distraction at k = 3: good holds no distractor in its top 3 (rate 0, SAFE); weak holds two in each
  (rate 2/3, DANGEROUS); with reference ids alone nobody can tell (binary labels);
* calibrate (good): the true utility of its list (1, 1, 1, -1, 0, -1, 0, 0, 0, 0 by the default map) peaks at
  K = 3 on every query.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "CLASSES",
    "DK",
    "GOOD",
    "GRADE",
    "POOL_EXTRA",
    "UTILITY",
    "WEAK",
    "Corpus",
    "K",
    "guide_samples",
    "make",
    "write",
]

K = 5  #: the slots the LLM reads
DK = 3  #: the distraction view
CLASSES = {"H": 16, "S": 18, "Rt": 6}
GRADE = {"R1": 5, "R2": 4, "R3": 4, "D1": 1, "D2": 1, "F1": 2, "F2": 2, "F3": 2, "F4": 2}
UTILITY = {5: 1.0, 4: 1.0, 3: 0.5, 2: 0.0, 1: -1.0}  # the documented default utility map
GOOD = ["R1", "R2", "R3", "D1", "F1", "D2", "O1", "F2", "O2", "O3"]
WEAK = {
    "H": ["R1", "D1", "D2", "R2", "R3", "F1", "F2", "O1", "O2", "O3"],
    "S": ["D1", "D2", "R1", "F1", "F2", "O1", "R2", "R3", "O2", "O3"],
    "Rt": ["D1", "D2", "R1", "F1", "F2", "O1", "O2", "O3", "O4", "O5"],
}
#: the weak pipeline's first stage: 20 candidates (the final list's chunks and more)
POOL_EXTRA = ["F3", "F4", "O4", "O5", "O6"]


@dataclass
class Corpus:
    qids: list[str]
    cls: dict[str, str]  #: query -> H, S or Rt
    question: dict[str, str]
    text: dict[str, str]  #: chunk id -> text
    good: dict[str, list[str]]  #: query -> ranked chunk ids
    weak: dict[str, list[str]]
    pool: dict[str, list[str]]  #: the weak pipeline's first-stage candidates
    grade: dict[tuple[str, str], int] = field(default_factory=dict)  #: the graded truth (query, chunk)

    def relevant(self, q: str) -> list[str]:
        return [f"{q}-{r}" for r in ("R1", "R2", "R3")]

    def kind(self, chunk: str) -> str:
        return chunk.split("-", 1)[1]

    # -- the truth, from the construction ------------------------------------------------------------
    def recall_at(self, run: dict[str, list[str]], k: int) -> float:
        return sum(len(set(run[q][:k]) & set(self.relevant(q))) / 3 for q in self.qids) / len(self.qids)

    def rr(self, run: dict[str, list[str]]) -> float:
        ranks = [next(i for i, d in enumerate(run[q], start=1) if self.kind(d).startswith("R")) for q in self.qids]
        return sum(1 / r for r in ranks) / len(ranks)

    def distractor_rate(self, run: dict[str, list[str]], k: int) -> float:
        return sum(sum(self.kind(d).startswith("D") for d in run[q][:k]) / k for q in self.qids) / len(self.qids)

    def best_fixed_k(self, run: dict[str, list[str]]) -> int:
        """The K whose mean total true utility of the top K is the highest (ties: the smallest K)."""
        depth = len(next(iter(run.values())))
        means = []
        for k in range(1, depth + 1):
            total = sum(UTILITY.get(GRADE.get(self.kind(d), 0), 0.0) for q in self.qids for d in run[q][:k])
            means.append(total / len(self.qids))
        return 1 + means.index(max(means))

    def failing(self) -> dict[str, str]:
        """The weak pipeline's failing queries and their stage."""
        return {q: {"S": "selection", "Rt": "retrieval"}[c] for q, c in self.cls.items() if c != "H"}


def make() -> Corpus:
    qids, cls, question, text, good, weak, pool, grade = [], {}, {}, {}, {}, {}, {}, {}
    n = 0
    for c, count in CLASSES.items():
        for _ in range(count):
            q = f"q{n:02d}"
            n += 1
            qids.append(q)
            cls[q] = c
            words = [f"top{n}w{j}" for j in range(3)]
            question[q] = f"what is the {' '.join(words)}?"
            for j in (1, 2, 3):
                text[f"{q}-R{j}"] = f"The {' '.join(words)} is answer{n}x{j}, as the record shows."
            for j in (1, 2):
                text[f"{q}-D{j}"] = f"The {' '.join(words)} is wrong{n}x{j}, a common confusion."
            for j in (1, 2, 3, 4):
                text[f"{q}-F{j}"] = f"Notes on {words[j % 3]} and related filler{n}x{j} matters."
            for j in (1, 2, 3, 4, 5, 6):
                text[f"{q}-O{j}"] = f"Unrelated passage off{n}x{j} about other things entirely."
            for kind, g in GRADE.items():
                grade[(q, f"{q}-{kind}")] = g
            good[q] = [f"{q}-{k}" for k in GOOD]
            weak[q] = [f"{q}-{k}" for k in WEAK[c]]
            first = list(weak[q])
            if c == "Rt":
                first = [d for d in first if not d.endswith(("-R2", "-R3"))]
            first += [f"{q}-{k}" for k in POOL_EXTRA if f"{q}-{k}" not in first]
            pool[q] = first
    return Corpus(qids, cls, question, text, good, weak, pool, grade)


def _scores(n: int) -> list[float]:
    return [round(1.0 - 0.1 * i, 1) for i in range(n)]


def write(c: Corpus, folder: Path) -> dict[str, Path]:
    """Every expression of the corpus under ``folder``; returns the paths by name."""
    out: dict[str, Path] = {}

    def dump(name: str, rows: list[dict]) -> None:
        out[name] = folder / name
        out[name].write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")

    for sys_name, run in (("good", c.good), ("weak", c.weak)):
        refs, graded, ragas = [], [], []
        for q in c.qids:
            retrieved = [{"id": d, "text": c.text[d], "score": s} for d, s in zip(run[q], _scores(len(run[q])))]
            base = {"query_id": q, "question": c.question[q], "retrieved": retrieved}
            if sys_name == "weak":
                base["pool"] = c.pool[q]
            refs.append({**base, "reference_ids": c.relevant(q)})
            graded.append({**base, "grades": {d: g for (qq, d), g in c.grade.items() if qq == q}})
            ragas.append(
                {
                    "user_input": c.question[q],
                    "retrieved_contexts": [c.text[d] for d in run[q]],
                    "reference_contexts": [c.text[d] for d in c.relevant(q)],
                }
            )
        dump(f"refs_{sys_name}.jsonl", refs)
        dump(f"graded_{sys_name}.jsonl", graded)
        dump(f"ragas_{sys_name}.jsonl", ragas)
        lines = [
            f"{q} Q0 {d} {i} {s} {sys_name}\n" for q in c.qids for i, (d, s) in enumerate(zip(run[q], _scores(10)), 1)
        ]
        out[f"{sys_name}.run"] = folder / f"{sys_name}.run"
        out[f"{sys_name}.run"].write_text("".join(lines), encoding="utf-8")
    out["human.qrels"] = folder / "human.qrels"
    out["human.qrels"].write_text("".join(f"{q} 0 {d} {g}\n" for (q, d), g in c.grade.items()), encoding="utf-8")
    return out


def guide_samples(folder: Path) -> list[Path]:
    """The RAG guide's two sample sets in ``folder``: ``bm25.jsonl`` (the weak pipeline, with each
    sample's ``pool``) and ``dense.jsonl`` (the better one), with reference ids."""
    with tempfile.TemporaryDirectory() as tmp:
        files = write(make(), Path(tmp))
        out = []
        for name, src in (("bm25.jsonl", "refs_weak.jsonl"), ("dense.jsonl", "refs_good.jsonl")):
            target = folder / name
            target.write_bytes(files[src].read_bytes())
            out.append(target)
    return out
