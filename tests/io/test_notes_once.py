"""Each note once per command (issue 29, point 19): a note several runs or files share is one line naming
them; and the hint "use method=containment" fires only where the references are excerpts of the chunks,
never on MS MARCO's distinct near-duplicate passages (a reference held in another, longer passage)."""

from __future__ import annotations

from pathlib import Path

import ctxeval
from real_data import dl19_grades, dl19_ranked, dl19_texts
from scenario import planted

EXCERPT = "equal no retrieved text but are contained in one"


def test_a_note_three_runs_share_is_said_once(tmp_path: Path) -> None:
    files = planted.write(planted.make(), tmp_path)
    one = files["refs_weak.jsonl"]
    single = ctxeval.distraction_table(samples={"a": one}, k=12)["notes"]
    triple = ctxeval.distraction_table(samples={"a": one, "b": one, "c": one}, k=12)["notes"]
    assert len(triple) == len(single)
    depth = [n for n in triple if "exceeds the ranked list's depth" in n]
    assert depth == [n.replace("a: k=12", "3 runs (a, b, c): k=12") for n in single if "exceeds" in n]
    res = ctxeval.evaluate(samples={"a": one, "b": one}, measures=["RR", "Harm@12"])
    alone = ctxeval.evaluate(samples={"a": one}, measures=["RR", "Harm@12"])
    assert len(res.notes) == len(alone.notes) and len(set(res.notes)) == len(res.notes)


def test_the_no_verdict_explanation_is_said_once() -> None:
    from click.testing import CliRunner

    from ctxeval._cli import cli

    files = planted.write(planted.make(), Path(__import__("tempfile").mkdtemp()))
    res = CliRunner().invoke(
        cli, ["distraction", "--samples", f"a={files['refs_weak.jsonl']}", f"b={files['refs_weak.jsonl']}", "-k", "3"]
    )
    assert res.exit_code == 0, res.output
    text = res.stdout.replace("\n", " ")
    assert text.count("say which chunks are relevant, not which distract") == 1
    assert "a: no verdict: in 40 of 40 queries the top 3 holds chunks nobody labelled" in res.stdout


def _dl19_texts(cut: int | None) -> list[dict]:
    """RankVicuna's top 10 over BM25 as RAGAS text-only samples: with ``cut`` None the references are
    the texts of every passage graded >= 2 (whole passages, retrieved or not), else the first ``cut``
    characters of those retrieved (excerpts of the retrieved chunks)."""
    text, grades, ranked = dl19_texts(), dl19_grades(), dl19_ranked("rankvicuna_on_bm25.top100.txt")
    refs = {q: sorted(d for d, g in docs.items() if g >= 2) for q, docs in grades.items()}
    out = []
    for q in sorted(ranked):
        top = [text[d] for d in ranked[q][:10]]
        kept = (
            [text[d] for d in sorted(refs[q])]
            if cut is None
            else [text[d][:cut] for d in ranked[q][:10] if d in refs[q]]
        )
        out.append({"query_id": q, "retrieved_contexts": top, "reference_contexts": kept})
    return out


def test_the_excerpt_hint_fires_on_excerpts_not_on_near_duplicate_passages() -> None:
    whole = _dl19_texts(None)
    # MS MARCO: of the references that equal no retrieved text, some are held in another (longer)
    # passage: distinct near-duplicates, which containment would credit though they are not references
    near_dups = sum(
        1
        for x in whole
        for r in x["reference_contexts"]
        if r not in x["retrieved_contexts"] and any(r in c for c in x["retrieved_contexts"])
    )
    exact = sum(1 for x in whole for r in x["reference_contexts"] if r in x["retrieved_contexts"])
    assert 0 < near_dups < exact  # the case the hint used to fire on: references held in other passages
    s = ctxeval.Samples.from_records(whole)
    assert not any(EXCERPT in n for n in s.notes)
    excerpts = ctxeval.Samples.from_records(_dl19_texts(60))
    hint = [n for n in excerpts.notes if EXCERPT in n]
    assert len(hint) == 1 and "method=containment" in hint[0]
    # containment then credits the references exact matching missed: every reference here is an excerpt
    # of a retrieved passage, so ContextRecall(method=containment) is 1 wherever there are references
    res = ctxeval.evaluate(samples=excerpts, measures=["ContextRecall(method=containment)", "ContextRecall"]).runs[0]
    assert res.mean("ContextRecall(method=containment)") == 1.0 and res.mean("ContextRecall") == 0.0
