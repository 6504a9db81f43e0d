"""``--ties expected`` on real runs with integer scores (TREC DL19, ../shared/data/real): the SPLADE++ run
(integer scores, 17 groups of tied scores) and the BM25 run with its scores rounded to integers (nearly
every row ties). The closed forms equal the exact average over every order of the ties (the engine that
enumerates them, a different algorithm) on the SPLADE run; the report shows each run's spread between
the best and the worst order; ``--ties docno`` is the default's bytes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from ctxeval import Policies
from ctxeval._cli import cli
from ctxeval._measures.base import averaged, make
from ctxeval._session import open_session
from real_data import real

CLOSED = [
    *["P@10", "R@100", "AP", "AP@10", "RR", "RR(rel=2)@10", "nDCG@10", "nDCG", "DCG@5", "Bpref", "Success@1"],
    *["Rprec", "Judged@10", "RBP(p=0.8)", "binG", "relative_P@10", "unj@10", "IDBasedContextPrecision@10"],
    *["RankWeightedPrecision@10", "RankWeightedPrecision(rel=2)", "gm_map", "Rprec_mult(mult=0.5)"],
]


def _dl19(run: str) -> tuple[str, str]:
    """DL19's qrels and one of its runs (the test skips, saying why, without the shared data)."""
    return str(real("dl19", "qrels.dl19-passage.txt")), str(real("dl19", "runs", f"{run}.top100.txt"))


def test_closed_forms_equal_the_exact_average_on_the_splade_run() -> None:
    qrels, run = _dl19("spladepp_ed")
    session, runs = open_session(qrels, [run], CLOSED, policies=Policies(ties="expected"))
    data = session.prepare(runs[0])
    assert data.tie_groups is not None and data.tie_groups.groups(data.r_off) == 17
    moved = 0
    for name in CLOSED:
        m = make(*_parts(name))
        assert m.ties.how == "closed", name
        closed, exact = m.compute(data), averaged(data, m)
        np.testing.assert_allclose(closed, exact, rtol=1e-10, atol=1e-13, err_msg=name)
        moved += int(np.count_nonzero(np.abs(closed - m.spec.kernel(data, m)) > 1e-12))
    assert moved > 0  # the ties change some value somewhere (else the check could not fail)


def _parts(name: str) -> tuple[str, dict, int | float | None]:
    from ctxeval import parse_measure

    m = parse_measure(name)
    return m.family, dict(m.params), m.cutoff


def _rounded(tmp: Path) -> str:
    """The DL19 BM25 run with its scores cut to integers (so nearly every row ties)."""
    _, run = _dl19("bm25")
    out = tmp / "bm25.int.run"
    lines = []
    for line in Path(run).read_text(encoding="utf-8").splitlines():
        q, q0, d, rank, score, tag = line.split()
        lines.append(f"{q} {q0} {d} {rank} {int(float(score))} {tag}\n")
    out.write_text("".join(lines), encoding="utf-8")
    return str(out)


def test_the_report_shows_how_much_of_a_figure_is_luck(tmp_path: Path) -> None:
    qrels, splade = _dl19("spladepp_ed")
    rounded = _rounded(tmp_path)
    args = ["evaluate", qrels, f"splade={splade}", f"bm25int={rounded}", "-m", "nDCG@10", "-m", "AP", "-m", "P@10"]
    table = CliRunner().invoke(cli, [*args, "--ties", "expected"])
    assert table.exit_code == 0, table.output
    assert "tied scores: best and worst orders" in table.output
    assert "--ties expected: the figures above are expected values over every order" in table.output
    assert "splade: 17 groups of tied scores (34 rows) in 15 of 43 queries" in table.output
    out = json.loads(CliRunner().invoke(cli, [*args, "--ties", "expected", "--format", "json", "--per-query"]).output)
    runs = {r["name"]: r for r in out["runs"]}
    ties = runs["bm25int"]["ties"]
    assert ties["tied_rows"] > 4000 and ties["queries_with_ties"] == 43
    for m in ("nDCG@10", "AP", "P@10"):
        mean = runs["bm25int"]["aggregate"][m]
        assert ties["worst"][m] < mean < ties["best"][m]  # a real spread, the expectation inside it
        assert ties["queries_moved"][m] > 20
        assert ties["best"][m] - ties["worst"][m] > 0.05
        for q, row in runs["bm25int"]["per_query_ties"].items():
            if m in row:
                best, worst = row[m]
                assert worst - 1e-12 <= runs["bm25int"]["per_query"][q][m] <= best + 1e-12
    assert runs["splade"]["ties"]["queries_moved"]["AP"] == 1  # few ties there: little luck
    assert out["settings"]["ties"] == "expected"


def test_docno_is_the_default_order_byte_for_byte() -> None:
    qrels, splade = _dl19("spladepp_ed")
    base = ["evaluate", qrels, splade, "-m", "nDCG@10", "-m", "AP", "--format", "json", "--per-query"]
    default = CliRunner().invoke(cli, base).output
    assert CliRunner().invoke(cli, [*base, "--ties", "docno"]).output == default
    assert '"ties": "trec"' in default
