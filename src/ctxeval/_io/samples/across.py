"""Several sample sets read together (runs compared): paired by query, their references compared,
their judgments united.

* **Pairing.** Sets name their queries by ``query_id``. A set without query ids (RAGAS's text-only
  files) is named by position within its file (``line-1``, ...); read beside others, its samples are
  paired by their questions instead (a filtered or asynchronous RAGAS export lists the same questions
  in another order): each takes the name of the same question in the first such set. A question
  missing from one set, asked twice in one, or a sample without a question is refused, naming the
  rows; so is a set named by position beside one named by query id.
* **References.** Each set keeps its own references: where two sets give one query different
  reference ids (or reference contexts), scoring one set against the union would change its figures
  by the other's references. ``evaluate`` then scores each set against its own, apart, with a note
  that their figures do not compare; every verb that compares runs (compare, distraction,
  metric_at_k, ...) refuses them, naming the query, the files and what differs. Graded judgments
  (``grades``) are pooled, as TREC pools the judgments of the runs it compares: they must agree where
  they meet, and each set is scored against the union.
* **Ids that match nothing.** A set none of whose retrieved ids is one of its references, on every
  query that has both, scores 0 throughout: a note says so (two id schemes, e.g. chunk ids against
  document ids, are the usual cause).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..._errors import ConfigError, InputError
from ..labels import union
from ..model import Qrels
from .notes import BY_POSITION
from .sets import Samples, _Lazy

__all__ = ["check_references", "differing_references", "mismatch_notes", "pair_by_question", "union_qrels"]


def _shown(values: Sequence[str], n: int = 3) -> str:
    head = ", ".join(repr(v if len(v) <= 60 else v[:57] + "...") for v in list(values)[:n])
    return head + (f" and {len(values) - n} more" if len(values) > n else "")


def _questions(st: Samples) -> dict[str, str]:
    """Question -> the sample's name, for a set named by position; an error for a sample without a
    question or a question asked twice."""
    out: dict[str, str] = {}
    for s in st.samples:
        if not s.question:
            raise InputError(
                f"{st.source}: sample {s.query_id} has no question, and the set no query_id: sets read together "
                "are paired by query_id, or by their questions; give every sample one of them"
            )
        if s.question in out:
            raise InputError(
                f"{st.source}: samples {out[s.question]} and {s.query_id} ask the same question ({_shown([s.question])}): "
                "without query_id the sets are paired by their questions; give each sample a query_id"
            )
        out[s.question] = s.query_id
    return out


def pair_by_question(sets: list[Samples]) -> tuple[list[Samples], list[str]]:
    """The sets with those named by position paired by their questions (see the module docstring),
    and the note that says so (none when there was nothing to pair)."""
    positional = [st for st in sets if st.by_position]
    if len(sets) < 2 or not positional:
        return sets, []
    named = next((st for st in sets if not st.by_position), None)
    if named is not None:
        raise InputError(
            f"{positional[0].source} names its samples by position (no query_id) and {named.source} by query_id: "
            "sets read together are paired by query; give the same query_id in each, or none (then they are paired "
            "by their questions)"
        )
    first = _questions(sets[0])
    out = [sets[0]]
    for st in sets[1:]:
        asked = _questions(st)
        only_first = [q for q in first if q not in asked]
        only_here = [q for q in asked if q not in first]
        if only_first or only_here:
            parts = []
            if only_first:
                rows = ", ".join(first[q] for q in only_first[:3])
                parts.append(
                    f"{len(only_first)} question(s) of {sets[0].source} ({rows}: {_shown(only_first)}) are not in {st.source}"
                )
            if only_here:
                rows = ", ".join(asked[q] for q in only_here[:3])
                parts.append(
                    f"{len(only_here)} of {st.source} ({rows}: {_shown(only_here)}) are not in {sets[0].source}"
                )
            raise InputError(
                "; ".join(parts) + ": sets without query_id are paired by their questions, which must be the same in "
                "each (give query_id to pair them otherwise)"
            )
        renamed = tuple(replace(s, query_id=first[s.question]) for s in st.samples)  # type: ignore[index]
        out.append(replace(st, samples=renamed))
    out = [replace(st, notes=tuple(n for n in st.notes if n != f"{st.source}: {BY_POSITION.format(n=len(st))}"))
           for st in out]  # fmt: skip
    note = (
        f"{len(sets)} sample sets without query_id ({', '.join(st.source for st in sets)}): paired by their "
        f"questions, each sample named after its question's line in {sets[0].source} (line-1 .. line-{len(sets[0])})"
    )
    return out, [note]


def _references(st: Samples) -> dict[str, tuple[str, frozenset[str]]]:
    """Per query, the references a set gives as ids or as texts: (what, the set of them); graded
    judgments are pooled, not compared (see the module docstring)."""
    if isinstance(st.samples, _Lazy):
        c = st.samples.columnar
        f = c.frame.select("query_id", "reference_ids")
        given = c.given_grades if c.given_grades is not None else [False] * f.height
        return {
            q: ("reference ids", frozenset(refs))
            for q, refs, graded in zip(f["query_id"].to_list(), f["reference_ids"].to_list(), given)
            if refs is not None and not graded
        }
    out: dict[str, tuple[str, frozenset[str]]] = {}
    for s in st.samples:
        if s.judgments_from == "reference_ids":
            out[s.query_id] = ("reference ids", frozenset(s.grades or ()))
        elif s.judgments_from == "reference_contexts":
            out[s.query_id] = ("reference contexts", frozenset(s.relevant_contexts()))
    return out


def differing_references(sets: Sequence[Samples]) -> tuple[int, str] | None:
    """(how many queries two sets give different reference ids or contexts, what differs on the first
    of them), or None when the sets agree wherever they meet."""
    first: dict[str, tuple[str, frozenset[str], Samples]] = {}
    found: list[str] = []
    for st in sets:
        for q, (what, refs) in _references(st).items():
            seen = first.get(q)
            if seen is None:
                first[q] = (what, refs, st)
            elif seen[0] == what and seen[1] != refs:
                if not found:
                    a, b = sorted(seen[1] - refs), sorted(refs - seen[1])
                    diff = "; ".join(
                        part
                        for part in (
                            f"{len(a)} only in {seen[2].source} ({_shown(a)})" if a else "",
                            f"{len(b)} only in {st.source} ({_shown(b)})" if b else "",
                        )
                        if part
                    )
                    found.append(f"query {q!r}: {seen[2].source} and {st.source} give different {what} ({diff})")
                else:
                    found.append(q)
    return (len(found), found[0]) if found else None


def check_references(sets: Sequence[Samples]) -> None:
    """Refuse sets that give a query different references (see the module docstring)."""
    diff = differing_references(sets)
    if diff is not None:
        n, first = diff
        more = f" (and {n - 1} more queries)" if n > 1 else ""
        raise ConfigError(
            f"{first}{more}: each sample set keeps its own references, and sets compared together must share "
            "them (evaluate scores each against its own); give them the same references, or compare them apart"
        )


def union_qrels(sets: Sequence[Samples]) -> Any:
    """The judgments of several sample sets: their references, which must be the same where two sets
    give one query reference ids or contexts (:func:`check_references`), and graded judgments pooled,
    which must agree where they meet (a (query, chunk) pair graded differently by two sets is an error
    naming both)."""
    import polars as pl

    if len(sets) == 1:
        return sets[0].qrels()
    check_references(sets)
    frames = [st.qrels_frame().with_columns(pl.lit(k, dtype=pl.Int64).alias("set")) for k, st in enumerate(sets)]
    both = pl.concat(frames).unique(["query_id", "doc_id", "relevance"], keep="first", maintain_order=True)
    clash = both.filter(pl.len().over("query_id", "doc_id") > 1)
    if clash.height:
        a = clash.row(0, named=True)
        b = clash.filter((pl.col("query_id") == a["query_id"]) & (pl.col("doc_id") == a["doc_id"])).row(1, named=True)
        raise ConfigError(
            f"query {a['query_id']!r} chunk {a['doc_id']!r}: grade {a['relevance']} in {sets[a['set']].source} but "
            f"{b['relevance']} in {sets[b['set']].source}; sample sets compared together must share their references"
        )
    source = " + ".join(dict.fromkeys(st.source for st in sets))
    labels = union([st.labels for st in sets])
    return Qrels.from_frame(both.select("query_id", "doc_id", "relevance"), source=source, labels=labels)


def _hits(st: Samples) -> tuple[int, int]:
    """(queries with both retrieved chunks and reference ids or grades, those where a retrieved chunk is
    one of them)."""
    import polars as pl

    if isinstance(st.samples, _Lazy):
        c = st.samples.columnar
        run = c.frame.select("query_id", pl.col("retrieved_ids").alias("doc_id")).explode("doc_id").drop_nulls()
        refs = st.qrels_frame().filter(pl.col("relevance") > 0)
        both = run.join(refs.select("query_id").unique(), on="query_id", how="semi")
        n = both["query_id"].n_unique()
        hit = both.join(refs, on=["query_id", "doc_id"], how="semi")["query_id"].n_unique()
        return n, hit
    n = hit = 0
    for s in st.samples:
        refs = {d for d, g in (s.grades or {}).items() if g > 0}
        if refs and s.retrieved_ids:
            n += 1
            hit += any(d in refs for d in s.retrieved_ids)
    return n, hit


def mismatch_notes(sets: Sequence[Samples]) -> list[str]:
    """A note for each set none of whose retrieved ids is one of its references (see the module)."""
    out = []
    for st in sets:
        n, hit = _hits(st)
        if n and not hit:
            out.append(
                f"{st.source}: on none of its {n} queries with references is a retrieved chunk one of them, so every "
                "measure scores 0: do its retrieved ids and its reference ids follow one naming (a chunk id against "
                "its document's id, a prefix, a hash of the text)?"
            )
    return out
