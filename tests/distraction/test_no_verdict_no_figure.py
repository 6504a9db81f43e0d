"""Where the distraction table gives no verdict, it prints no figure of harm beside it (issue 29,
point 13): on reference ids (binary labels) a top k holding unlabelled chunks has no distractor rate,
and the mean over the other queries (0.0000 here: their top 3 are all references) read as "no
distractors"."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from click.testing import CliRunner

import ctxeval
from ctxeval._cli import cli
from scenario import planted

LABELLED = 6  #: queries whose top 3 is made all references


def _mixed(tmp: Path) -> Path:
    files = planted.write(planted.make(), tmp)
    rows = [json.loads(line) for line in files["refs_weak.jsonl"].read_text().splitlines()]
    for r in rows[:LABELLED]:
        refs = set(r["reference_ids"])
        r["retrieved"] = [c for c in r["retrieved"] if c["id"] in refs] + [
            c for c in r["retrieved"] if c["id"] not in refs
        ]
    out = tmp / "mixed.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return out


def test_no_verdict_prints_no_rate_no_harm(tmp_path: Path) -> None:
    path = _mixed(tmp_path)
    t = ctxeval.distraction_table(samples={"mixed": path, "good": tmp_path / "refs_good.jsonl"}, k=3)
    mixed, good = t["rows"]
    assert mixed["verdict"] == "NA" and f"in {40 - LABELLED} of 40 queries" in mixed["verdict_reason"]
    assert mixed["distractor_rate"] is None and mixed["distractor_harm"] is None and mixed["hidden_harm"] is None
    assert mixed["measures"]["DistractorRate@3"] is None and mixed["measures"]["DistractorHarm@3"] is None
    assert mixed["measures"]["RR"] is not None  # the rank measures stand
    # every top 3 of the good pipeline is references: a verdict, and its figures
    assert (good["verdict"], good["distractor_rate"], good["hidden_harm"]) == ("SAFE", 0.0, 0.0)
    assert repr(t).startswith("DistractionTable(k=3: mixed NA (rate NA), good SAFE (rate 0.0000)")
    res = CliRunner().invoke(cli, ["distraction", "--samples", f"mixed={path}", "-k", "3"])
    assert res.exit_code == 0, res.output
    row = next(line for line in res.stdout.splitlines() if line.startswith("│ mixed"))
    cells = [c.strip() for c in row.strip("│").split("│")]
    header = next(line for line in res.stdout.splitlines() if line.startswith("┃ run"))
    names = [c.strip() for c in header.strip("┃").split("┃")]
    shown = dict(zip(names, cells))
    assert (shown["rate"], shown["harm"], shown["verdict"], shown["hidden harm"]) == ("NA", "NA", "NA", "NA")
    res = CliRunner().invoke(cli, ["distraction", "--samples", f"mixed={path}", "-k", "3", "--format", "csv"])
    rec = next(csv.DictReader(io.StringIO(res.stdout)))
    assert (rec["DistractorRate@3"], rec["DistractorHarm@3"], rec["hidden_harm"], rec["verdict"]) == ("", "", "", "NA")
