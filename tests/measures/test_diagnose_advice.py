"""diagnose does not overstate (issue 12, point 4): a query where both stages fail has its own class,
the advice gives the counts and an exact sign test, and labels name the user's own grades."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from scipy.stats import binomtest

from ctxeval import diagnose
from ctxeval._cli import cli
from ctxeval._core.signtest import sign_test


@pytest.mark.parametrize(
    ("a", "b"), [(14, 13), (13, 14), (9, 1), (0, 7), (30, 5), (0, 0), (1, 0), (100, 70), (500, 460)]
)
def test_sign_test_matches_scipy(a: int, b: int) -> None:
    want = 1.0 if a + b == 0 else binomtest(a, a + b, 0.5).pvalue
    assert sign_test(a, b) == pytest.approx(want, rel=1e-12)


def _dl_case() -> tuple[dict, dict, dict]:
    """TREC DL grades 0-3. q-both: the pool (first stage) holds the grade-3 doc at rank 2 and a grade-2
    doc, but misses a second grade-3 doc; the reranker moves the grade-3 doc to rank 8, below K = 5.
    q-ret: the pool misses both grade-3 docs, the reranker keeps what the pool has (grade 2 on top)."""
    qrels = {
        "q-both": {"g3a": 3, "g3b": 3, "g2": 2} | {f"n{i}": 0 for i in range(8)},
        "q-ret": {"h3a": 3, "h3b": 3, "h2": 2},
    }
    pool = {
        "q-both": {"n0": 10.0, "g3a": 9.0, "g2": 8.0} | {f"n{i}": 7.0 - i / 10 for i in range(1, 8)},
        "q-ret": {"h2": 5.0, "m1": 4.0, "m2": 3.0},
    }
    final = {
        "q-both": {f"n{i}": 10.0 - i for i in range(7)} | {"g3a": 2.0, "g2": 1.0},
        "q-ret": {"h2": 5.0, "m1": 4.0, "m2": 3.0},
    }
    return qrels, pool, final


def test_a_query_where_both_stages_fail_is_its_own_class() -> None:
    qrels, pool, final = _dl_case()
    d = diagnose(qrels, final, pool, k=5, rag={"grade_map": "trec-dl"})
    both, ret = d["q-both"], d["q-ret"]
    # q-both: the pool holds one of two grade-3 docs (and the grade 2): PROC < 0.8; the top 5 of the
    # final run holds none of them: %PROC = 0 -> both (the old rule said "never reached the pool")
    assert both.proc < 0.8 and both.pct_proc == 0.0 and both.verdict == "both"
    assert [(m.doc_id, m.where) for m in both.missed] == [("g3a", "pool rank 2, final rank 8"), ("g3b", "not in pool")]
    # q-ret: the pool holds only the grade 2, which the top 5 keeps: %PROC = 1 -> retrieval
    assert ret.proc < 0.8 and ret.pct_proc == 1.0 and ret.verdict == "retrieval"
    assert d.counts == {"retrieval": 1, "selection": 0, "both": 1, "healthy": 0, "undefined": 0}
    # q-ret's top 5 holds its whole pool: it cannot fail at selection, so its retrieval failure is no
    # evidence of which stage fails more often (issue 29, point 12)
    assert d.advice == (
        "cannot tell: the top 5 holds the whole pool on 1 of 2 queries, where no query can fail at selection "
        "(1 retrieval failure there, none at selection by construction); give the pool the reranker chose from "
        "(`pool` field or `--pool`)"
    )
    # the missed docs are named in the user's grades: DL grade 3 is grade 5 after trec-dl
    assert d.settings["top_grade"]["qrels_grades"] == [3]
    assert d.to_dict()["settings"]["top_grade"]["label"] == "qrels grade 3 (= 5)"


def _counted(retrieval: int, selection: int) -> dict:
    """``retrieval`` queries whose pool lacks the grade-5 doc, ``selection`` queries whose final top 1
    lost it (the pool is the final run: PROC@1 = 1, the doc sits at rank 2)."""
    qrels: dict = {}
    pool: dict = {}
    final: dict = {}
    for i in range(retrieval):
        q = f"r{i:03d}"
        qrels[q] = {"gold": 5, "ok": 3}
        pool[q] = final[q] = {"ok": 2.0, "junk": 1.0}
    for i in range(selection):
        q = f"s{i:03d}"
        qrels[q] = {"gold": 5}
        pool[q] = {"gold": 2.0, "junk": 1.0}
        final[q] = {"junk": 2.0, "gold": 1.0}
    return {"qrels": qrels, "run": final, "pool": pool}


@pytest.mark.parametrize(
    ("r", "s", "advice"),
    [
        (14, 13, "no clear winner: 14 retrieval vs 13 selection failures (sign test p = 1.000)"),
        (13, 14, "no clear winner: 13 retrieval vs 14 selection failures (sign test p = 1.000)"),
        (9, 1, "fix the retriever first: 9 retrieval vs 1 selection failures (sign test p = 0.021)"),
        (2, 12, "fix the reranker first: 12 selection vs 2 retrieval failures (sign test p = 0.013)"),
        (30, 0, "fix the retriever first: 30 retrieval vs 0 selection failures (sign test p < 0.001)"),
    ],
)
def test_the_advice_says_how_sure_it_is(r: int, s: int, advice: str) -> None:
    d = diagnose(**_counted(r, s), k=1)
    assert (d.counts["retrieval"], d.counts["selection"]) == (r, s)
    assert d.advice == advice
    assert d.p_value == pytest.approx(binomtest(max(r, s), r + s, 0.5).pvalue, rel=1e-12)


def test_cli_labels_use_the_users_grade_scale(tmp_path) -> None:
    qrels, pool, final = _dl_case()
    paths = {}
    for name, data, line in (
        ("qrels", qrels, "{q} 0 {d} {v}\n"),
        ("pool", pool, "{q} Q0 {d} 1 {v} p\n"),
        ("final", final, "{q} Q0 {d} 1 {v} f\n"),
    ):
        paths[name] = tmp_path / f"{name}.txt"
        paths[name].write_text("".join(line.format(q=q, d=d, v=v) for q, docs in data.items() for d, v in docs.items()))
    res = CliRunner().invoke(
        cli,
        [
            "diagnose",
            str(paths["qrels"]),
            str(paths["final"]),
            "--pool",
            str(paths["pool"]),
            "-k",
            "5",
            "--grade-map",
            "trec-dl",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "missed qrels grade 3 (= 5) docs" in res.output
    assert "│ both " in res.output or " both " in res.output
