"""ctxeval[report] alone: ``ctxeval compare --format html`` draws its figures with matplotlib (inline SVG)."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import ctxeval_by_path


def test_html_report_has_figures(tmp_path: Path) -> None:
    qrels = [f"q{q} 0 d{d} {1 + (q + d) % 3}" for q in range(12) for d in range(4)]
    (tmp_path / "qrels.txt").write_text("\n".join(qrels) + "\n")
    for name, shift in (("a", 0), ("b", 2)):
        lines = [f"q{q} Q0 d{(d + shift * (q % 2)) % 8} {d + 1} {10 - d} {name}" for q in range(12) for d in range(8)]
        (tmp_path / f"{name}.run").write_text("\n".join(lines) + "\n")
    done = ctxeval_by_path(
        "compare",
        "qrels.txt",
        "a.run",
        "b.run",
        "-m",
        "nDCG@5",
        "-m",
        "AP",
        "--format",
        "html",
        "-o",
        "report.html",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "report.html").read_text()
    assert len(re.findall(r"<svg\b", page)) >= 1
    assert "matplotlib.axis_1" in page  # drawn by matplotlib, not a placeholder
