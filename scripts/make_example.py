#!/usr/bin/env python3
"""Regenerate the derived files of the bundled ctxeval example data set.

Hand-authored sources of truth (read, never written here):
    src/ctxeval/data/example/passages.jsonl
    src/ctxeval/data/example/queries.jsonl
    src/ctxeval/data/example/qrels.txt
    src/ctxeval/data/example/distractors.txt

Derived files (written deterministically by this script):
    runs/bm25.run, runs/tfidf.run, runs/rrf.run,
    runs/bm25-rerank.run, runs/rrf-rerank.run
    categories.tsv, utilities.txt (simulated), answers.tsv (simulated)

Usage:  python scripts/make_example.py [--out DIR]

Only the standard library and numpy are used.  Running the script twice
produces byte-identical files.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import re
import unicodedata
import zlib
from collections import Counter
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DEFAULT_DIR = HERE.parent / "src" / "ctxeval" / "data" / "example"

DEPTH = 50  # candidates per query in every run
BM25_K1 = 0.9
BM25_B = 0.4
RRF_K = 60
SEED = 20240611  # base seed for the simulated files

STOPWORDS = frozenset(
    [
        "a",
        "about",
        "across",
        "after",
        "against",
        "all",
        "also",
        "among",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "don",
        "during",
        "each",
        "else",
        "every",
        "for",
        "from",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "many",
        "me",
        "more",
        "most",
        "much",
        "my",
        "no",
        "nor",
        "not",
        "of",
        "off",
        "on",
        "once",
        "one",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "out",
        "over",
        "own",
        "per",
        "s",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "t",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
    ]
)

_TOKEN_RE = re.compile(r"[^\W_]+")


# --------------------------------------------------------------------------
# text processing
# --------------------------------------------------------------------------
def _fold(text: str) -> str:
    """Lower-case and strip diacritics (Nîmes -> nimes)."""
    text = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in text if not unicodedata.combining(c))


def stem(tok: str) -> str:
    """Very light suffix stripping: plurals, -ing, -ed, -ance/-ence/-ant/-ent, final -e."""
    if len(tok) > 4 and tok.endswith("ies"):
        tok = tok[:-3] + "y"
    elif len(tok) > 4 and tok.endswith("sses"):
        tok = tok[:-2]
    elif len(tok) > 3 and tok.endswith("s") and not tok.endswith(("ss", "us", "is")):
        tok = tok[:-1]
    if len(tok) >= 7 and tok.endswith("ing"):
        tok = tok[:-3]
    elif len(tok) > 4 and tok.endswith("ed"):
        tok = tok[:-2]
    for suffix in ("ance", "ence", "ant", "ent"):
        if tok.endswith(suffix) and len(tok) - len(suffix) >= 5:
            tok = tok[: -len(suffix)]
            break
    if len(tok) > 4 and tok.endswith("e"):
        tok = tok[:-1]
    return tok


def tokenize(text: str) -> list[str]:
    """lower-case, split on non-alphanumerics, drop stop words, light stemming."""
    return [stem(t) for t in _TOKEN_RE.findall(_fold(text)) if t not in STOPWORDS]


# --------------------------------------------------------------------------
# I/O helpers
# --------------------------------------------------------------------------
def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def read_qrels(path: Path) -> dict[tuple[str, str], int]:
    qrels: dict[tuple[str, str], int] = {}
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                qid, _, doc, grade = line.split()
                qrels[(qid, doc)] = int(grade)
    return qrels


def read_pairs(path: Path) -> set[tuple[str, str]]:
    with path.open(encoding="utf-8") as fh:
        return {tuple(line.split()) for line in fh if line.strip()}  # type: ignore[misc]


def write_lines(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        fh.write("".join(line + "\n" for line in lines))


def write_run(path: Path, run: dict[str, list[tuple[str, float]]], tag: str, fmt: str) -> None:
    lines = []
    for qid in sorted(run):
        for rank, (doc, score) in enumerate(run[qid], start=1):
            lines.append(f"{qid} Q0 {doc} {rank} {format(score, fmt)} {tag}")
    write_lines(path, lines)


# --------------------------------------------------------------------------
# index and first-stage retrieval
# --------------------------------------------------------------------------
class Index:
    """Inverted statistics for BM25 (title + text) and TF-IDF (text only)."""

    def __init__(self, passages: list[dict]):
        self.doc_ids = [p["doc_id"] for p in passages]
        self.tokens = {p["doc_id"]: tokenize(p["title"] + " " + p["text"]) for p in passages}
        self.title_tokens = {p["doc_id"]: set(tokenize(p["title"])) for p in passages}
        self.tf = {d: Counter(toks) for d, toks in self.tokens.items()}
        self.n_docs = len(passages)
        self.avgdl = sum(len(t) for t in self.tokens.values()) / self.n_docs
        self.df: Counter[str] = Counter()
        for counts in self.tf.values():
            self.df.update(counts.keys())
        # TF-IDF uses the passage text only (no title), with its own df
        text_tf = {p["doc_id"]: Counter(tokenize(p["text"])) for p in passages}
        self.text_df: Counter[str] = Counter()
        for counts in text_tf.values():
            self.text_df.update(counts.keys())
        self.tfidf_vec = {}
        self.tfidf_norm = {}
        for d, counts in text_tf.items():
            vec = {t: (1.0 + math.log(c)) * self.idf_log(t) for t, c in counts.items()}
            self.tfidf_vec[d] = vec
            self.tfidf_norm[d] = math.sqrt(sum(w * w for w in vec.values()))

    def idf_bm25(self, term: str) -> float:
        df = self.df.get(term, 0)
        return math.log(1.0 + (self.n_docs - df + 0.5) / (df + 0.5))

    def idf_log(self, term: str) -> float:
        df = self.text_df.get(term, 0)
        return math.log(self.n_docs / df) if df else 0.0

    def bm25(self, query_terms: list[str]) -> dict[str, float]:
        terms = sorted(set(query_terms))
        scores = {}
        for d in self.doc_ids:
            counts, dl = self.tf[d], len(self.tokens[d])
            norm = BM25_K1 * (1.0 - BM25_B + BM25_B * dl / self.avgdl)
            s = 0.0
            for t in terms:
                f = counts.get(t, 0)
                if f:
                    s += self.idf_bm25(t) * f * (BM25_K1 + 1.0) / (f + norm)
            scores[d] = s
        return scores

    def tfidf(self, query_terms: list[str]) -> dict[str, float]:
        qvec = {t: (1.0 + math.log(c)) * self.idf_log(t) for t, c in Counter(query_terms).items()}
        qnorm = math.sqrt(sum(w * w for w in qvec.values())) or 1.0
        scores = {}
        for d in self.doc_ids:
            vec = self.tfidf_vec[d]
            dot = sum(w * vec.get(t, 0.0) for t, w in qvec.items())
            dnorm = self.tfidf_norm[d] or 1.0
            scores[d] = dot / (qnorm * dnorm)
        return scores


def top_k(scores: dict[str, float], k: int = DEPTH, ndigits: int = 6) -> list[tuple[str, float]]:
    """Best k documents; scores are rounded first so that ties are genuine
    ties in the written file and are broken by doc id."""
    rounded = {d: round(s, ndigits) for d, s in scores.items()}
    ranked = sorted(rounded.items(), key=lambda kv: (-kv[1], kv[0]))
    return ranked[:k]


def rrf(runs: list[list[tuple[str, float]]], all_docs: list[str], k: int = RRF_K) -> list[tuple[str, float]]:
    """Reciprocal rank fusion: score(d) = sum over runs of 1 / (k + rank).

    Zero-score entries are padding (the method found no evidence for them), so
    they do not contribute; if fewer than DEPTH documents have fused evidence
    the list is padded with score-0 documents in doc-id order, exactly as the
    input runs are."""
    fused: dict[str, float] = {}
    best: dict[str, int] = {}
    for run in runs:
        for rank, (doc, score) in enumerate(run, start=1):
            if score <= 0:
                continue
            fused[doc] = fused.get(doc, 0.0) + 1.0 / (k + rank)
            best[doc] = min(best.get(doc, rank), rank)
    ranked = sorted(fused.items(), key=lambda kv: (-round(kv[1], 6), best[kv[0]], kv[0]))
    out = [(d, round(s, 6)) for d, s in ranked[:DEPTH]]
    seen = {d for d, _ in out}
    for d in sorted(all_docs):
        if len(out) >= DEPTH:
            break
        if d not in seen:
            out.append((d, 0.0))
    return out


# --------------------------------------------------------------------------
# the "reranker": a feature combination that is stronger than the first stage
# but still lexical at heart (so it can be fooled by well-matching distractors)
# --------------------------------------------------------------------------
# A small hand-written lexicon of related words.  It stands in for the
# semantic matching a neural cross-encoder would provide: a query term that
# is absent from a passage counts as partly present (RELATED_CREDIT) when a
# word from one of its groups occurs.  Groups are applied symmetrically.
RELATED_GROUPS = [
    "tell communicate signal dance message recruit",
    "where location direction site",
    "flower nectar blossom food",
    "spoil spoilage keep microbe preserve decay",
    "know evidence eyewitness account record letter",
    "happen event describe account",
    "steep slope gradient fall descent descend drop",
    "nimes nemausus",
    "ceylon sri lanka",
    "fungus rust pathogen mould spore",
    "wiped ruined destroyed devastated collapsed abandoned",
    "plantation estate farm",
    "mirror reflector retroreflector prism",
    "measure ranging timing determine",
    "distance separation gap",
    "explosion exploded accident ignited rupture bang",
    "caused traced fault origin",
    "cold rhinovirus respiratory virus viral",
    "work act effective target",
    "antibiotic antibacterial drug",
    "biggest largest greatest record critical",
    "difference range",
    "year annual annually",
    "summer june july august",
    "eruption erupted erupt",
    "invented devised developed designed",
    "movable individual reusable reused",
    "type character letter",
    "death died kill mortality toll",
    "threat danger priority urgent critical",
    "kill destroy burst inactivate",
    "live lifespan survive life",
    "long duration lasted until",
    "tall height high metre",
    "tallest highest",
    "land landed touched touchdown",
    "moon lunar",
    "geologist geology scientist",
    "first earliest oldest",
    "press printing plunger platen screw",
    "alloy metal lead tin antimony mixture",
    "brought introduced carried established",
    "england english westminster",
    "drive drove driving rover travelled",
    "crater caldera impact depression bowl",
    "form formed produced blasted collapse",
    "pull gravity force",
    "length lengthen duration",
    "day rotation spin",
    "barrage dam turbine sluice",
    "generate electricity power megawatt",
    "altitude elevation highland metre",
    "grow cultivate cultivation thrive perform",
    "egg lay laying brood",
    "harm damage disease virus",
    "colony hive",
    "treatise book wrote",
    "official curator commissioner appointed",
    "supply feed supplied",
    "valley cross bridge siphon arcade",
    "pipe fistula clay terracotta",
]
RELATED_CREDIT = 0.7
W_BM25 = 0.25
# remaining feature weights (all weights sum to 1, so the score lies in [0, 1])
W_COVERAGE, W_BIGRAM, W_PROXIMITY, W_TITLE = 0.45, 0.10, 0.10, 0.10


def _build_related() -> dict[str, frozenset[str]]:
    related: dict[str, set[str]] = {}
    for group in RELATED_GROUPS:
        stems = {stem(_fold(w)) for w in group.split()}
        for t in stems:
            related.setdefault(t, set()).update(stems - {t})
    return {t: frozenset(v) for t, v in related.items()}


RELATED = _build_related()


def _min_window(positions: dict[str, list[int]]) -> int:
    """Length of the shortest token window containing every key of positions."""
    events = sorted((p, t) for t, ps in positions.items() for p in ps)
    need, have = len(positions), Counter()
    best, left, covered = len(events) + 10**6, 0, 0
    for right in range(len(events)):
        t = events[right][1]
        have[t] += 1
        if have[t] == 1:
            covered += 1
        while covered == need:
            best = min(best, events[right][0] - events[left][0] + 1)
            lt = events[left][1]
            have[lt] -= 1
            if have[lt] == 0:
                covered -= 1
            left += 1
    return best


def rerank_features(index: Index, query_terms: list[str], doc: str) -> tuple[float, float, float, float]:
    """coverage, bigram, proximity and title features, each in [0, 1]."""
    qset = list(dict.fromkeys(query_terms))
    toks = index.tokens[doc]
    present = set(toks)
    weights = {t: index.idf_bm25(t) for t in qset}
    total = sum(weights.values()) or 1.0
    # 1. idf-weighted coverage of distinct query terms (related words count partly)
    match = {}
    for t in qset:
        if t in present:
            match[t] = 1.0
        elif RELATED.get(t, frozenset()) & present:
            match[t] = RELATED_CREDIT
        else:
            match[t] = 0.0
    coverage = sum(weights[t] * match[t] for t in qset) / total
    # 2. query bigrams found as adjacent tokens in the passage
    qbigrams = set(itertools.pairwise(query_terms))
    dbigrams = set(itertools.pairwise(toks))
    bigram = len(qbigrams & dbigrams) / len(qbigrams) if qbigrams else 0.0
    # 3. proximity: matched terms / shortest window covering all of them,
    #    scaled by the share of the query that is matched
    positions: dict[str, list[int]] = {}
    for i, t in enumerate(toks):
        if t in weights:
            positions.setdefault(t, []).append(i)
    m = len(positions)
    proximity = (m / _min_window(positions)) * (m / len(qset)) if m >= 2 else 0.0
    # 4. idf-weighted share of the query found in the title
    title = sum(w for t, w in weights.items() if t in index.title_tokens[doc]) / total
    return coverage, bigram, proximity, title


def rerank(index: Index, query_terms: list[str], pool: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """Reorder the given pool (same documents, new order, scores in [0, 1])."""
    bm25 = index.bm25(query_terms)
    top = max((bm25[d] for d, _ in pool), default=0.0) or 1.0
    scored = []
    for i, (d, _) in enumerate(pool):
        cov, big, prox, title = rerank_features(index, query_terms, d)
        s = W_BM25 * bm25[d] / top + W_COVERAGE * cov + W_BIGRAM * big + W_PROXIMITY * prox + W_TITLE * title
        scored.append((d, round(min(1.0, max(0.0, s)), 6), i))
    scored.sort(key=lambda x: (-x[1], x[2]))  # ties keep the pool order
    return [(d, s) for d, s, _ in scored]


# --------------------------------------------------------------------------
# simulated files
# --------------------------------------------------------------------------
# Mean simulated utility per grade.  Grade 1 mixes two kinds of passage: a
# plausible distractor (same topic as the query) makes an LLM answer
# confidently and wrongly, so its utility is high; off-topic junk leads to
# a NO-RESPONSE, so its utility is low.
UTILITY_MEAN = {5: 0.90, 4: 0.75, 3: 0.45, 2: 0.15}
UTILITY_MEAN_DISTRACTOR = 0.60  # grade 1, same topic as the query
UTILITY_MEAN_JUNK = 0.05  # grade 1, off-topic
UTILITY_MEAN_LISTED_GRADE2 = 0.55  # grade 2 but on the known-distractor list
UTILITY_SD = 0.06


def _rng(*parts: str) -> np.random.Generator:
    """Independent, order-free random stream per (purpose, qid, item)."""
    key = "|".join(parts).encode("utf-8")
    return np.random.default_rng([SEED, zlib.crc32(key)])


def _std_normal(rng: np.random.Generator) -> float:
    """Box-Muller from two uniforms (uniform streams are the most stable part
    of numpy's Generator API across versions)."""
    u1, u2 = rng.random(2)
    return math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(2.0 * math.pi * u2)


def is_distractor(qid: str, doc: str, qrels, distractors, q_topic, d_topic) -> bool:
    """Known distractor, or a same-topic passage judged grade 1."""
    if (qid, doc) in distractors:
        return True
    return qrels.get((qid, doc)) == 1 and q_topic[qid] == d_topic[doc]


def simulate_utilities(qrels, distractors, q_topic, d_topic) -> list[str]:
    lines = []
    for (qid, doc), grade in sorted(qrels.items()):
        if grade == 1:
            same = q_topic[qid] == d_topic[doc] or (qid, doc) in distractors
            mean = UTILITY_MEAN_DISTRACTOR if same else UTILITY_MEAN_JUNK
        elif grade == 2 and (qid, doc) in distractors:
            mean = UTILITY_MEAN_LISTED_GRADE2
        else:
            mean = UTILITY_MEAN[grade]
        u = float(np.clip(mean + UTILITY_SD * _std_normal(_rng("utility", qid, doc)), 0.0, 1.0))
        lines.append(f"{qid} {doc} {u:.3f}")
    return lines


# Logistic model of answer correctness given the top-5 passages of a run:
#   z = BIAS + HIGH * min(3, #grade>=4) + HAS5 * [any grade 5] + DISTRACTOR * #distractors
ANS_BIAS, ANS_HIGH, ANS_HAS5, ANS_DISTRACTOR = -1.0, 0.8, 0.9, -0.7


def simulate_answers(runs, qrels, distractors, q_topic, d_topic) -> list[str]:
    lines = ["qid\trun\tcorrect"]
    for qid in sorted(q_topic):
        for name in sorted(runs):
            top5 = [d for d, _ in runs[name][qid][:5]]
            grades = [qrels.get((qid, d), 0) for d in top5]
            n_high = min(3, sum(g >= 4 for g in grades))
            has5 = any(g == 5 for g in grades)
            n_bad = sum(is_distractor(qid, d, qrels, distractors, q_topic, d_topic) for d in top5)
            z = ANS_BIAS + ANS_HIGH * n_high + ANS_HAS5 * has5 + ANS_DISTRACTOR * n_bad
            p = 1.0 / (1.0 + math.exp(-z))
            correct = int(_rng("answer", qid, name).random() < p)
            lines.append(f"{qid}\t{name}\t{correct}")
    return lines


# --------------------------------------------------------------------------
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_DIR, help="example data directory")
    args = ap.parse_args()
    base: Path = args.out

    passages = read_jsonl(base / "passages.jsonl")
    queries = read_jsonl(base / "queries.jsonl")
    qrels = read_qrels(base / "qrels.txt")
    distractors = read_pairs(base / "distractors.txt")
    if len(passages) <= DEPTH:
        raise SystemExit(f"corpus must contain more than {DEPTH} passages")

    index = Index(passages)
    runs: dict[str, dict[str, list[tuple[str, float]]]] = {
        "bm25": {},
        "tfidf": {},
        "rrf": {},
        "bm25-rerank": {},
        "rrf-rerank": {},
    }
    for q in sorted(queries, key=lambda q: q["qid"]):
        qid, terms = q["qid"], tokenize(q["text"])
        runs["bm25"][qid] = top_k(index.bm25(terms), ndigits=4)
        runs["tfidf"][qid] = top_k(index.tfidf(terms), ndigits=6)
        runs["rrf"][qid] = rrf([runs["bm25"][qid], runs["tfidf"][qid]], index.doc_ids)
        runs["bm25-rerank"][qid] = rerank(index, terms, runs["bm25"][qid])
        runs["rrf-rerank"][qid] = rerank(index, terms, runs["rrf"][qid])

    fmts = {"bm25": ".4f", "tfidf": ".6f", "rrf": ".6f", "bm25-rerank": ".6f", "rrf-rerank": ".6f"}
    for name, run in runs.items():
        write_run(base / "runs" / f"{name}.run", run, name, fmts[name])

    cat_lines = []
    for q in sorted(queries, key=lambda q: q["qid"]):
        cat_lines.append(f"{q['qid']}\t{q['category']}")
        cat_lines.append(f"{q['qid']}\ttopic:{q['topic']}")
    write_lines(base / "categories.tsv", cat_lines)

    q_topic = {q["qid"]: q["topic"] for q in queries}
    d_topic = {p["doc_id"]: p["topic"] for p in passages}
    write_lines(base / "utilities.txt", simulate_utilities(qrels, distractors, q_topic, d_topic))
    write_lines(base / "answers.tsv", simulate_answers(runs, qrels, distractors, q_topic, d_topic))
    write_lines(base / "samples.jsonl", sample_lines(runs["rrf-rerank"], passages, queries, qrels, fmts["rrf-rerank"]))


SAMPLE_DEPTH = 10


def sample_lines(run, passages, queries, qrels, fmt: str) -> list[str]:
    """The rrf-rerank run as a sample set: per query its question, category, top 10 chunks (id, text,
    score) and the graded judgments of the query (``grades``), one JSON object per line."""
    text = {p["doc_id"]: p["text"] for p in passages}
    lines = []
    for q in sorted(queries, key=lambda q: q["qid"]):
        qid = q["qid"]
        grades = {d: g for (qq, d), g in sorted(qrels.items()) if qq == qid}
        sample = {
            "query_id": qid,
            "question": q["text"],
            "category": q["category"],
            "retrieved": [
                {"id": d, "text": text[d], "score": float(format(s, fmt))} for d, s in run[qid][:SAMPLE_DEPTH]
            ],
            "grades": grades,
        }
        lines.append(json.dumps(sample, ensure_ascii=False))
    return lines


if __name__ == "__main__":
    main()
