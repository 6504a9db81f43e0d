"""``ctxeval trec_eval``: byte-identical to trec_eval on trec_eval's own test files, and line for line
equal to pytrec_eval (trec_eval 9.0.x) on generated data. trec_eval's files: the shared folder
(``tests/shared_data.py``; the tests that read them are skipped without it)."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxeval._cli import cli as ctxeval_cli
from ctxeval._trec_eval import trec_eval
from shared_data import needs_trec_eval, trec_eval_data

DATA = trec_eval_data()
QRELS = str(DATA / "qrels.test")
RESULTS = str(DATA / "results.test")
TRUNC = str(DATA / "results.trunc")


def cli(*args: str, input: str | None = None) -> tuple[int, str, str]:
    res = CliRunner().invoke(ctxeval_cli, ["trec_eval", *args], input=input)
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise res.exception
    return res.exit_code, res.stdout, res.stderr


def expected(name: str) -> str:
    return (DATA / name).read_text()


def recorded(name: str) -> str:
    """What trec_eval 10.0 (``.v10``) or 9.0.8 (``.v9``) printed (``tests/trec_eval_cases.py``)."""
    return (DATA / "recorded" / name).read_text()


def summary_lines(text: str) -> str:
    return "".join(line for line in text.splitlines(keepends=True) if "\tall\t" in line)


# --------------------------------------------------------------------------------------------------
# trec_eval's own test suite
# --------------------------------------------------------------------------------------------------


# every command of trec_eval's own test suite, byte for byte in both versions: test_trec_eval_suite.py


@needs_trec_eval
def test_all_trec_v10_differs_from_v9_only_where_10_changed() -> None:
    """10.0 = 9.x except: iprec_at_recall and 11pt_avg cut-offs by lround (the lines of out.test and
    m_11pt_avg.c's 0.1962), and the new measures unj, rbp, rbp_resid (values of trec_eval's 10.0
    test/out.test.a)."""
    v9 = summary_lines(recorded("out.test.aq.v9")).splitlines(keepends=True)
    out = cli("-m", "all_trec", QRELS, RESULTS)[1].splitlines(keepends=True)
    iprec_10 = {line.split("\t")[0]: line for line in expected("out.test").splitlines(keepends=True)}
    iprec_10["11pt_avg              "] = "11pt_avg              \tall\t0.1962\n"  # trec_eval 10.0 (0.1958 in 9.x)
    want = [iprec_10.get(line.split("\t")[0], line) if line.startswith(("iprec", "11pt")) else line for line in v9]
    want += ["rbp                   \tall\t0.3234\n", "rbp_resid             \tall\t0.0204\n",
             "unj_5                 \tall\t0.0000\n", "unj_10                \tall\t0.0000\n",
             "unj_20                \tall\t0.0333\n"]  # fmt: skip
    assert out == want


@needs_trec_eval
def test_complete_v10_prints_and_zeroes_missing_topics() -> None:
    out = cli("-q", "-c", "-m", "all_trec", QRELS, TRUNC)[1]
    lines = [line.split("\t") for line in out.splitlines() if "\t302\t" in line]
    values = {name.strip(): value for name, _, value in lines}
    assert values["num_rel"] == "77" and values["num_ret"] == "0" and values["relstring"] == "''"
    assert all(float(v) == 0.0 for k, v in values.items() if k not in ("num_rel", "relstring"))
    # averages over the three judged topics agree with 9.x except where 10.0 changed a measure
    v9 = dict(line.split("\tall\t") for line in summary_lines(recorded("out.test.aqc.v9")).splitlines())
    v10 = dict(line.split("\tall\t") for line in summary_lines(out).splitlines())
    for name, value in v9.items():
        if not name.startswith("iprec_at_recall"):
            assert v10[name] == value, name
    assert v10["iprec_at_recall_0.10          "[:22]] == "0.2699"


# --------------------------------------------------------------------------------------------------
# line for line against pytrec_eval on generated files
# --------------------------------------------------------------------------------------------------

pytrec_eval = pytest.importorskip("pytrec_eval")
LONGS = {"num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"}


def fmt(name: str, value: float) -> str:
    return str(int(value)) if name in LONGS else f"{value:6.4f}"


def write_case(tmp_path: Path, rng: random.Random, tag: str = "sys") -> tuple[dict, dict, str, str]:
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for qi in rng.sample(range(30), rng.randint(2, 7)):
        q = str(qi)
        docs = [f"D{j}" for j in range(rng.randint(1, 40))]
        judged = {d: rng.choice((-1, 0, 0, 1, 2, 3)) for d in docs if rng.random() < 0.6}
        if judged and max(judged.values()) >= 0 and rng.random() < 0.9:
            qrels[q] = judged
        ret = {d: rng.choice((1.0, 2.0, 0.5, rng.random())) for d in docs if rng.random() < 0.8}
        if ret and rng.random() < 0.9:
            run[q] = ret
    if not set(qrels) & set(run):
        qrels["99"], run["99"] = {"a": 1}, {"a": 1.0}
    qp, rp = tmp_path / "qrels", tmp_path / "run"
    qp.write_text("".join(f"{q} 0 {d} {g}\n" for q, j in qrels.items() for d, g in j.items()))
    rows = [(q, d, s) for q, r in run.items() for d, s in r.items()]
    rng.shuffle(rows)
    rp.write_text("".join(f"{q}\tQ0\t{d}\t0\t{s!r}\t{tag}\n" for q, d, s in rows))
    return qrels, run, str(qp), str(rp)


@pytest.mark.parametrize("seed", range(8))
def test_cli_lines_equal_pytrec_eval(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    qrels, run, qp, rp = write_case(tmp_path, rng)
    level = 1 + seed % 3
    out = trec_eval(qp, rp, ["all_trec"], query=True, level=level, version=9)
    measures = {"P", "recall", "ndcg_cut", "map_cut", "relative_P", "success", "iprec_at_recall", "Rprec_mult", "map",
                "gm_map", "Rprec", "bpref", "recip_rank", "ndcg", "ndcg_rel", "Rndcg", "G", "binG", "infAP", "gm_bpref",
                "11pt_avg", "utility", "set_P", "set_recall", "set_F", "set_map", "set_relative_P", "num_ret", "num_rel",
                "num_rel_ret", "num_nonrel_judged_ret"}  # fmt: skip
    ref = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=level).evaluate(run)
    checked = 0
    sums: dict[str, list[float]] = {}
    for line in out.splitlines():
        name, qid, value = line.split("\t")
        name = name.strip()
        if qid == "all" or name == "relstring":
            continue
        assert value == fmt(name, ref[qid][name]), (qid, name)
        checked += 1
    for qid in sorted(ref):  # topic order of the summary: trec_eval adds in qid order
        for name, v in ref[qid].items():
            sums.setdefault(name, []).append(v)
    n = len(ref)
    for line in summary_lines(out).splitlines():
        name, _, value = line.split("\t")
        name = name.strip()
        if name not in sums:
            continue
        total = 0.0
        for v in sums[name]:
            total += v
        want = math.exp(total / n) if name.startswith("gm_") else total if name in LONGS else total / n
        assert value == fmt(name, want), name
    assert checked > 50


# --------------------------------------------------------------------------------------------------
# options, input rules, errors
# --------------------------------------------------------------------------------------------------


def test_runid_is_the_last_lines_tag_and_ranks_are_ignored(tmp_path: Path) -> None:
    q = tmp_path / "q"
    q.write_text("1 0 a 1\n1 0 b 0\n")
    r = tmp_path / "r"
    r.write_text("1 Q0 a 1 0.5 first\n1 Q0 b 2 0.5 last\n")  # tie: docno descending puts b first
    out = cli("-m", "runid", "-m", "recip_rank", str(q), str(r))[1]
    assert out == "runid                 \tall\tlast\nrecip_rank            \tall\t0.5000\n"


def test_nosummary_max_docs_and_judged_only(tmp_path: Path) -> None:
    q = tmp_path / "q"
    q.write_text("1 0 a 1\n1 0 b 1\n")
    r = tmp_path / "r"
    r.write_text("1 Q0 x 1 3 s\n1 Q0 a 2 2 s\n1 Q0 b 3 1 s\n")
    assert cli("-n", "-q", "-m", "P.1", str(q), str(r))[1] == "P_1                   \t1\t0.0000\n"
    assert cli("-m", "num_ret", "-M", "2", str(q), str(r))[1] == "num_ret               \tall\t2\n"
    assert cli("-m", "P.1", "-J", str(q), str(r))[1] == "P_1                   \tall\t1.0000\n"
    assert cli("-m", "num_ret", "-M0", "-c", str(q), str(r))[1] == "num_ret               \tall\t0\n"


def test_level_and_utility_collection_size(tmp_path: Path) -> None:
    q = tmp_path / "q"
    q.write_text("1 0 a 2\n1 0 b 1\n1 0 c 0\n")
    r = tmp_path / "r"
    r.write_text("1 Q0 a 1 3 s\n1 Q0 b 2 2 s\n")
    assert cli("-l2", "-m", "P.2", "-m", "num_rel", str(q), str(r))[1] == (
        "num_rel               \tall\t1\nP_2                   \tall\t0.5000\n"
    )
    # a=1 relret, b=1 nonrel ret (at -l2), c=0 rel not ret, N=10: 1*1 + -1*1 + 0 + 0.5*(10+1-2-1)
    assert cli("-l2", "-N", "10", "-mutility.1,-1,0,0.5", str(q), str(r))[1] == "utility_1,-1,0,0.5    \tall\t4.0000\n"


@needs_trec_eval
def test_parameter_names_and_relstring(tmp_path: Path) -> None:
    out = cli("-q", "-mrelstring.20", "-m", "set_F.0.5", "-m", "rbp.p=0.5", "-m", "Rprec_mult.100", QRELS, RESULTS)[1]
    # the first 10 characters are trec_eval's relstring (out.test.aq); the count of 1s is P_20 * 20
    assert "relstring_20          \t301\t'0000011000000--10101'\n" in out
    assert "relstring_20          \t302\t'11011101101111111110'\n" in out
    assert "set_F_0.5             \tall\t" in out and "rbp_p=0.5             \tall\t" in out
    assert "Rprec_mult_100.00     \tall\t" in out
    assert "relstring" not in summary_lines(out)


@needs_trec_eval
def test_results_from_stdin() -> None:
    code, out, _ = cli(QRELS, "-", input=Path(RESULTS).read_text())
    assert code == 0 and out == expected("out.test")


@pytest.mark.parametrize(
    ("args", "message", "status"),  # the status is trec_eval's (10.0 and 9.0.8 alike)
    [
        (["-m", "nosuch"], "illegal measure 'nosuch'", 1),
        (["-m", "P."], "improper measure", 1),
        (["-m", "P.0"], "Negative cutoff", 2),
        (["-m", "P.5,5"], "duplicate cutoffs", 2),
        (["-m", "utility.1,2,3"], "improper number of coefficients", 4),
        (["-m", "ndcg.1"], "malformed pair parameters", 2),
        (["--trec-eval-version", "9", "-m", "rbp"], "illegal measure 'rbp'", 1),
    ],
)
@needs_trec_eval
def test_measure_errors(args: list[str], message: str, status: int) -> None:
    code, out, err = cli(*args, QRELS, RESULTS)
    assert code == status and out == ""
    assert message in err and err.startswith("ctxeval: error:") and "Traceback" not in err


def test_input_errors(tmp_path: Path) -> None:
    q = tmp_path / "q"
    q.write_text("1 0 a 1\n")
    r = tmp_path / "r"
    r.write_text("2 Q0 a 1 1 s\n")
    code, _, err = cli(str(q), str(r))  # as trec_eval: 10.0 stops at the judged topic without results
    assert code == 4 and err == "trec_eval: result qid '1' not found in qrels\n"
    code, _, err = cli("--trec-eval-version", "9", str(q), str(r))  # 9.0.8 finds no topic to evaluate
    assert code == 7 and err == "trec_eval: No queries with both results and relevance info\n"
    assert cli("-c", "-m", "num_q", str(q), str(r))[1] == "num_q                 \tall\t1\n"
    r.write_text("1 Q0 a 1 1 s\n1 Q0 a 2 0 s\n")
    code, _, err = cli(str(q), str(r))
    assert code == 4 and "duplicate" in err
    code, _, err = cli(str(q), str(tmp_path / "absent"))
    assert code == 2 and "Traceback" not in err
    r.write_text("1 Q0 a\n")
    code, _, err = cli(str(q), str(r))
    assert code == 2 and err.startswith("ctxeval: error:")
