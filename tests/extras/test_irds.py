"""``irds:<id>``: ir_datasets' real loading code on a local ir_datasets home the tests build (no
download: every file is where ir_datasets keeps it after one, and a download attempt fails the test).

The home holds ``msmarco-passage/trec-dl-2019`` made of the bundled example (its passages as
``collection.tsv``, its queries plus two unjudged ones as ``queries.tsv``, its qrels as ``qrels``), so
every command run on ``irds:msmarco-passage/trec-dl-2019/judged`` must print what it prints on the
example's own files, byte for byte once the name of the qrels is swapped; and ``beir/scifact`` as the
zip BEIR publishes (corpus, queries, qrels/test.tsv), read by :func:`ctxeval.collect`. Runs in the
main test venv and alone with ``ctxeval[irds]`` in a clean venv."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import sys
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import irds_home
import pytest

# (not imported here: its home must be set first); the main run skips without it, its clean venv must have it
if importlib.util.find_spec("ir_datasets") is None and not os.environ.get("CTXEVAL_EXTRA"):
    pytest.skip("needs ir-datasets (ctxeval[irds])", allow_module_level=True)

import ctxeval
from ctxeval._cli import main

EXAMPLE, DL19 = irds_home.EXAMPLE, irds_home.DL19
QRELS = str(EXAMPLE / "qrels.txt")


@pytest.fixture(scope="module", autouse=True)
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """IR_DATASETS_HOME set before ir_datasets is imported (it fixes its paths then), downloads refused."""
    if "ir_datasets" in sys.modules:
        pytest.skip("ir_datasets was imported before this module set its home")
    home = tmp_path_factory.mktemp("ir_datasets_home")
    irds_home.build(home)
    before = os.environ.get("IR_DATASETS_HOME")
    os.environ["IR_DATASETS_HOME"] = str(home)
    from ir_datasets.util import download

    def refused(self: Any) -> Any:
        raise ConnectionError(f"a test may not download ({self.url})")

    original = download.RequestsDownload.stream
    download.RequestsDownload.stream = refused
    try:
        yield home
    finally:
        download.RequestsDownload.stream = original
        if before is None:
            os.environ.pop("IR_DATASETS_HOME", None)
        else:
            os.environ["IR_DATASETS_HOME"] = before


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_qrels_queries_and_passages_are_the_datasets() -> None:
    qrels = ctxeval.Qrels.coerce(DL19)
    assert qrels.to_dict() == ctxeval.Qrels.from_file(QRELS).to_dict() and qrels.source == DL19
    from ctxeval._io.side import read_passages, read_query_texts

    texts, source = read_query_texts(DL19)
    want = {json.loads(x)["qid"]: json.loads(x)["text"] for x in (EXAMPLE / "queries.jsonl").read_text().splitlines()}
    assert (texts, source) == (want, DL19)  # the judged subset: the two unjudged queries are not in it
    unfiltered, _ = read_query_texts("irds:msmarco-passage/trec-dl-2019")
    assert unfiltered == {**want, **irds_home.UNJUDGED}
    passages, _ = read_passages("irds:msmarco-passage")
    first = json.loads((EXAMPLE / "passages.jsonl").read_text().splitlines()[0])
    assert passages[first["doc_id"]] == first["text"] and "no-such-doc" not in passages
    assert len(passages) == 337


COMMANDS = [
    ["evaluate", "{q}", "{runs}/bm25.run", "{runs}/rrf-rerank.run", "-m", "nDCG@10", "-m", "AP", "--per-query"],
    ["evaluate", "{q}", "{runs}/bm25.run", "-m", "RA-nWG@10", "-m", "DistractorRate@5", "--format", "json"],
    ["trec_eval", "-q", "{q}", "{runs}/bm25.run"],
    ["compare", "{q}", "{runs}/bm25.run", "{runs}/rrf-rerank.run", "-m", "nDCG@10", "--format", "markdown"],
    ["curve", "{q}", "{runs}/bm25.run", "-m", "nDCG", "-k", "1:10"],
    ["distraction", "{q}", "{runs}/bm25.run", "{runs}/rrf-rerank.run", "-k", "5"],
    ["diagnose", "{q}", "{runs}/rrf-rerank.run", "--pool", "{runs}/rrf.run", "-k", "10"],
    ["calibrate", "{q}", "{runs}/rrf-rerank.run", "-k", "10", "--folds", "2"],
    ["fit-udcg", "{q}", "{runs}/bm25.run", "{runs}/rrf-rerank.run", "--answers", "{ex}/answers.tsv"],
    ["agreement", "{q}", "{ex}/../example/qrels.txt", "{runs}/bm25.run", "{runs}/rrf.run"],  # (the qrels twice)
]


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: " ".join(a[:1] + a[-2:]))
def test_every_command_prints_on_the_dataset_what_it_prints_on_its_files(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # (fit-udcg writes its weights beside)
    fill = {"runs": str(EXAMPLE / "runs"), "ex": str(EXAMPLE)}
    by_file = _run(*(a.format(q=QRELS, **fill) for a in argv))
    by_name = _run(*(a.format(q=DL19, **fill) for a in argv))
    assert by_file[0] == 0, by_file
    assert by_name[0] == 0, by_name
    assert by_name[1] == by_file[1].replace(QRELS, DL19)
    assert by_name[1] != "" and (argv[0] == "trec_eval" or "0." in by_name[1])


def test_the_judge_and_the_pool_read_queries_and_passages_by_name(tmp_path: Path) -> None:
    runs = str(EXAMPLE / "runs" / "bm25.run")
    for out, queries, passages in (("file", "queries.jsonl", "passages.jsonl"), ("name", DL19, "irds:msmarco-passage")):
        q = queries if queries.startswith("irds:") else str(EXAMPLE / queries)
        p = passages if passages.startswith("irds:") else str(EXAMPLE / passages)
        code, _, err = _run(
            "pool", runs, "--depth", "3", "--queries", q, "--passages", p, "-o", str(tmp_path / f"pool-{out}")
        )
        assert code == 0, err
        code, _, err = _run(
            "judge", "grade", runs, "--queries", q, "--passages", p, "--depth", "2", "--judge", "lexical",
            "--cache", str(tmp_path / f"cache-{out}.sqlite"), "-o", str(tmp_path / f"judged-{out}"),
        )  # fmt: skip
        assert code == 0, err
    for kind in ("pool", "judged"):
        assert (tmp_path / f"{kind}-name").read_bytes() == (tmp_path / f"{kind}-file").read_bytes()
    assert len((tmp_path / "pool-name").read_text().splitlines()) > 50


def test_compare_takes_query_texts_by_name() -> None:
    argv = ["compare", QRELS, str(EXAMPLE / "runs" / "bm25.run"), str(EXAMPLE / "runs" / "rrf.run"), "-m", "nDCG@10"]
    by_file = _run(*argv, "--queries", str(EXAMPLE / "queries.jsonl"))
    by_name = _run(*argv, "--queries", DL19)
    assert by_file[0] == by_name[0] == 0 and "query_length" in by_name[1]
    assert by_name[1] == by_file[1].replace(str(EXAMPLE / "queries.jsonl"), DL19)


def test_any_dataset_id_beir_scifact_as_questions_with_references() -> None:
    docs = {d["_id"]: f"{d['title']} {d['text']}" for d in irds_home.SCIFACT["corpus"]}

    def everything(question: str, k: int) -> list[dict[str, Any]]:
        return [{"id": d, "text": t} for d, t in docs.items()][:k]

    s = ctxeval.collect(everything, "irds:beir/scifact/test", k=3)
    # the test split's queries only (ir_datasets filters them by the split's qrels), its qrels as grades
    assert [(x.query_id, x.question, x.grades) for x in s.samples] == [
        ("1", irds_home.SCIFACT["queries"][0]["text"], {"4983": 1, "7912": 1}),
        ("3", irds_home.SCIFACT["queries"][1]["text"], {"5836": 1}),
    ]
    result = ctxeval.evaluate(samples=s, measures=["R@3", "RR"])
    # by hand: every query retrieves the whole corpus (4983, 5836, 7912): recall 1; first relevant at 1 and 2
    assert (result.runs[0].mean("R@3"), result.runs[0].mean("RR")) == (1.0, (1 + 1 / 2) / 2)
    passages, _ = ctxeval._io.side.read_passages("irds:beir/scifact")
    assert passages["7912"] == docs["7912"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["evaluate", "irds:msmarco-pasage/trec-dl-2019/judged", "{run}"],
         "ctxeval: error: irds:msmarco-pasage/trec-dl-2019/judged: unknown ir_datasets id (did you mean 'msmarco-passage/trec-dl-2019/judged'?)"),
        (["evaluate", "irds:msmarco-passage", "{run}"],
         "ctxeval: error: irds:msmarco-passage: this ir_datasets dataset has no qrels; its subsets with qrels: "),
        (["evaluate", "{qrels}", "irds:msmarco-passage/trec-dl-2019"],
         "ctxeval: error: irds:msmarco-passage/trec-dl-2019: an ir_datasets dataset gives qrels, query texts and passages, not a run"),
        (["evaluate", "irds:", "{run}"], "ctxeval: error: 'irds:': give an ir_datasets id after 'irds:'"),
        (["evaluate", "irds:vaswani", "{run}"],
         "ctxeval: error: irds:vaswani: ir_datasets could not download the dataset's files (a test may not download (http"),
    ],
)  # fmt: skip
def test_errors_are_one_line(argv: list[str], message: str) -> None:
    code, out, err = _run(*(a.format(run=EXAMPLE / "runs" / "bm25.run", qrels=QRELS) for a in argv))
    ours = [line for line in err.splitlines() if line.startswith("ctxeval:")]
    assert code == 2 and out == "" and len(ours) == 1, err
    assert ours[0].startswith(message), ours[0]
    assert "Traceback" not in err


def test_without_the_package_one_line_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ir_datasets", None)
    with pytest.raises(ctxeval.DependencyError) as info:
        ctxeval.Qrels.coerce(DL19)
    assert str(info.value) == "an irds: dataset needs ir-datasets, which is not installed: pip install 'ctxeval[irds]'"
