"""The circularity check with a real model, affordably (issue 33's done-when): a fixed small pool of TREC
DL19 pairs is judged once (the judgments cached), then the check is run over 50 seeded resamplings of
the pool's topics with those labels. Used by the slow real-server test (a small pool) and by
``bench/circularity_real.py`` (a larger one, and the lexical judge beside the model on the same pool).

The design, per seed: ``topics_per_seed`` of the pool's topics drawn at random; people's labels are
NIST's on the pool's pairs of those topics, the judge's its labels on the same pairs; the runs are a
planted run built to please the judge (each topic's pool ordered by the judge's grade, ties shuffled
by the seed) and the ten DL19 runs cut to those topics. The outcome counts, over the seeds, the
planted run flagged, the honest runs flagged (the five that do not match words: dense, learned sparse,
LLM rerankers over dense), and the seeds where the check said it cannot tell."""

from __future__ import annotations

import glob
import json
import os
import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from real_data import dl19_grades, dl19_ranked, real

#: the runs that do not match words: a judge of word overlap has no reason to lift them
HONEST = ("tasb", "openai_ada2", "spladepp_ed", "rankvicuna_on_tasb", "rankvicuna_on_openai_ada2")

Pairs = dict[tuple[str, str], int]


@dataclass(frozen=True)
class Pool:
    """The fixed pool: its topics, its (topic, passage) pairs (NIST-judged, in the union of the runs'
    top ``depth``), NIST's grades of them, and the runs by name (topic -> ranked passages)."""

    topics: tuple[str, ...]
    pairs: tuple[tuple[str, str], ...]
    human: Pairs
    runs: dict[str, dict[str, list[str]]]


def pool(n_topics: int, depth: int, seed: int = 0) -> Pool:
    """``n_topics`` DL19 topics with 3 or more passages of every NIST grade (drawn with ``seed``) and
    the NIST-judged passages among the union of the ten runs' top ``depth`` of each."""
    grades = dl19_grades()
    names = sorted(os.path.basename(p).split(".")[0] for p in glob.glob(str(real("dl19", "runs") / "*.txt")))
    runs = {n: dl19_ranked(f"{n}.top100.txt") for n in names}
    eligible = sorted(t for t in grades if all(sum(g == k for g in grades[t].values()) >= 3 for k in range(4)))
    topics = tuple(sorted(random.Random(seed).sample(eligible, n_topics)))
    pairs = sorted({(t, d) for t in topics for r in runs.values() for d in r[t][:depth] if d in grades[t]})
    return Pool(topics, tuple(pairs), {(t, d): grades[t][d] for t, d in pairs}, runs)


def write_inputs(p: Pool, folder: Path) -> dict[str, Path]:
    """The pool as ``ctxeval judge grade`` reads it: one run listing the pairs (pool.run), the topics'
    texts (queries.jsonl) and the passages' (passages.jsonl); people's labels as qrels (human.qrels)."""
    texts: dict[str, str] = {}
    wanted = {d for _, d in p.pairs}
    with open(real("dl19-text", "passages.jsonl"), "rb") as f:  # one JSON object a line (U+2028 inside some)
        for line in f:
            rec = json.loads(line)
            if rec["id"] in wanted:
                texts[rec["id"]] = rec["text"]
    topics = dict(ln.split("\t", 1) for ln in real("dl19-text", "topics.tsv").read_text().splitlines() if "\t" in ln)
    out = {name: folder / name for name in ("pool.run", "queries.jsonl", "passages.jsonl", "human.qrels")}
    by_topic: dict[str, list[str]] = {}
    for t, d in p.pairs:
        by_topic.setdefault(t, []).append(d)
    out["pool.run"].write_text(
        "".join(f"{t} Q0 {d} {i} {len(ds) - i} pool\n" for t, ds in by_topic.items() for i, d in enumerate(ds, 1))
    )
    out["queries.jsonl"].write_text("".join(json.dumps({"qid": t, "text": topics[t]}) + "\n" for t in p.topics))
    out["passages.jsonl"].write_text("".join(json.dumps({"id": d, "text": texts[d]}) + "\n" for d in sorted(wanted)))
    out["human.qrels"].write_text("".join(f"{t} 0 {d} {g}\n" for (t, d), g in sorted(p.human.items())))
    for name in sorted(p.runs):
        run = folder / f"{name}.run"
        run.write_text(
            "".join(f"{t} Q0 {d} {i} {100 - i} {name}\n" for t in p.topics for i, d in enumerate(p.runs[name][t], 1))
        )
        out[name] = run
    return out


def read_labels(path: Path) -> Pairs:
    return {(ln.split()[0], ln.split()[2]): int(ln.split()[3]) for ln in path.read_text().splitlines() if ln.strip()}


def seeded(p: Pool, judge: Pairs, seeds: int = 50, topics_per_seed: int | None = None) -> dict[str, Any]:
    """The circularity check over ``seeds`` seeded resamplings of the pool's topics with the judge's
    labels ``judge`` (see the module docstring): counts of the outcomes, and the grades compared."""
    from ctxeval._io.model import Run
    from ctxeval._judge.systems import SystemSettings, circularity
    from ctxeval._measures import parse_measures

    s = SystemSettings(parse_measures(["nDCG@10"])[0])
    k = topics_per_seed or len(p.topics)
    per_seed: list[dict[str, Any]] = []
    for seed in range(seeds):
        rng = random.Random(seed)
        ts = sorted(rng.sample(p.topics, k))
        human = {(t, d): g for (t, d), g in p.human.items() if t in ts and (t, d) in judge}
        mine = {pair: judge[pair] for pair in human}
        planted: dict[str, dict[str, float]] = {}
        for t in ts:  # the pool by the judge's own grade (ties shuffled): a run built to please it
            docs = [d for (tt, d) in human if tt == t]
            rng.shuffle(docs)
            ranked = sorted(docs, key=lambda d: -mine[t, d])[:20]
            planted[t] = {d: float(20 - i) for i, d in enumerate(ranked)}
        runs: list[Any] = [Run.from_dict(planted, name="planted")]
        for name in sorted(p.runs):
            runs.append(
                Run.from_dict({t: {d: float(100 - i) for i, d in enumerate(p.runs[name][t])} for t in ts}, name=name)
            )
        c = circularity(human, mine, runs, s)
        per_seed.append(
            {"planted": "planted" in c["flagged"], "honest": sum(h in c["flagged"] for h in HONEST),
             "flagged": len(c["flagged"]), "cannot_tell": c["cannot_tell"]}
        )  # fmt: skip
    reasons = [r["cannot_tell"] for r in per_seed if r["cannot_tell"]]
    return {
        "seeds": seeds,
        "topics_per_seed": k,
        "planted_flagged": sum(r["planted"] for r in per_seed),
        "honest_flagged": sum(r["honest"] for r in per_seed),
        "honest_runs": seeds * len(HONEST),
        "cannot_tell": len(reasons),
        "reason": reasons[0] if reasons else None,
        "per_seed": per_seed,
        "judge_grades": dict(sorted(Counter(judge[pair] for pair in p.human if pair in judge).items())),
        "human_grades": dict(sorted(Counter(p.human.values()).items())),
    }
