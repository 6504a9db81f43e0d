"""``ctxeval trec_eval`` against trec_eval 10.0 and 9.0.8 built from source: every command of trec_eval's
own test suite on its ``test/`` directory as it is in the repository, the rest of that directory, and
generated DL-HARD-like runs evaluated with ``-c -l2 -J -M50`` and around it. What each binary printed
(stdout and exit status) is recorded in the shared folder's ``trec_eval/recorded`` (``tests/shared_data.py``;
its cases: ``tests/trec_eval_cases.py``); ctxeval must print the same bytes and exit the same way. Without
the shared folder every test here is skipped, saying where it looked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxeval._cli import cli
from shared_data import needs_trec_eval, trec_eval_missing
from trec_eval_cases import CASES, DATA, MAKEFILE, RECORDED, VERSIONS, args_of, write_dlhard

pytestmark = needs_trec_eval
STATUS = json.loads((RECORDED / "exit_status.json").read_text()) if trec_eval_missing() is None else {}


@pytest.fixture(scope="module")
def dl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("dlhard")
    assert write_dlhard(folder) == STATUS["generated_sha256"], "the generator no longer writes the recorded files"
    return folder


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name", list(CASES))
def test_byte_identical_to_the_binary(name: str, version: str, dl: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(DATA)
    res = CliRunner().invoke(cli, ["trec_eval", "--trec-eval-version", version, *args_of(name, dl)])
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise res.exception
    want = (RECORDED / f"{name}.v{version}").read_bytes()
    assert res.stdout_bytes == want, res.stderr
    assert res.exit_code == STATUS["exit_status"][name][version], res.stderr
    if res.exit_code == 2:  # the binary refused the input: ctxeval says why, on one line
        assert res.stderr.startswith("ctxeval: error: ") and res.stderr.count("\n") == 1


# the Makefile's expected file of each command (its quicktest diffs the output with it)
_EXPECTED = {
    name: {"out.test.with-comments": "out.test", "out.test.prefs.comment": "out.test.prefs"}.get(name, name)
    for name in MAKEFILE
}
_EXPECTED["out.test.qrels_jg.comments"] = "out.test.qrels_jg"


@pytest.mark.parametrize("name", list(MAKEFILE))
def test_recordings_are_the_repository_s_own_expected_outputs(name: str) -> None:
    """The 10.0 recordings are trec_eval 10.0's ``test/out.*`` files (its ``make quicktest`` passes on
    the build that recorded them), and the 9.0.8 ones of 9.0.8's own test commands (all but the
    comment files, which 10.0 added) its own ``test/out.*`` files (``v9.0.8/``: those that differ)."""
    assert (RECORDED / f"{name}.v10").read_bytes() == (DATA / _EXPECTED[name]).read_bytes()
    if "comment" in name:
        return
    own9 = DATA / "v9.0.8" / _EXPECTED[name]
    own9 = own9 if own9.exists() else DATA / _EXPECTED[name]
    # 9.0.8's test runs its -Z command on its own zscores_file
    recorded9 = RECORDED / ("aqZ.v9_zscores.v9" if name == "out.test.aqZ" else f"{name}.v9")
    assert recorded9.read_bytes() == own9.read_bytes()


def test_the_suite_counts() -> None:
    """All 15 commands of 10.0's quicktest, and the generated cases print what the issue describes:
    10.0's own 0/0 as -nan, and 9.0.8's block of a topic cut to nothing by -J."""
    assert len(MAKEFILE) == 15
    v10 = (RECORDED / "dl.c.l2.J.M50.v10").read_text()
    v9 = (RECORDED / "dl.c.l2.J.M50.v9").read_text()
    # topic 1000 has no judged passage in its top 50: -J leaves it nothing; both print its block
    for out in (v10, v9):
        assert "num_ret               \t1000\t0\n" in out
        assert "iprec_at_recall_0.00  \t1000\t  -nan\n" in out
    assert "iprec_at_recall_0.00  \tall\t  -nan\n" in v10
    z9 = (RECORDED / "aqZ.v9_zscores.v9").read_text()
    assert "Zset_F                 \t301\t   nan\n" in z9  # 9.0.8's own zscores_file: mean and stddev nan
