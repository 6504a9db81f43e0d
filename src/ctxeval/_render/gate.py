"""The gate's report for people and for CI: a terminal table, Markdown (a CI step summary), JUnit XML
(one test case per gated measure) and GitHub annotations; ``power``'s plan as text. Deterministic
bytes; names from input are escaped for each format. The public :class:`GateReport` is the gate's
frozen result (:class:`ctxeval._gate.model.GateResult`) with these renderings, and :func:`gate` the
verb that returns it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import fields
from xml.etree import ElementTree as ET

from .._gate.gate import gate as gate_model
from .._gate.model import GateResult, GateRow, PowerPlan
from . import reporting

__all__ = [
    "GateReport",
    "gate",
    "power_lines",
    "row_sentence",
    "tell",
    "to_annotations",
    "to_junit",
    "to_markdown",
    "to_table",
]


def _f(x: float, signed: bool = False) -> str:
    if x is None or math.isnan(x):
        return "NA"
    return f"{x:+.4f}" if signed else f"{x:.4f}"


def _p(p: float) -> str:
    if math.isnan(p):
        return "NA"
    return f"{p:.1e}" if p < 1e-4 else f"{p:.4f}"


def _level(report: GateResult) -> str:
    return f"{100 * (1 - 2 * report.alpha):g}%"


def tell(r: GateRow) -> str:
    """Whether the set of queries is large enough to tell a drop of ``r.detect``."""
    if r.why:
        return f"untested: {r.why}"
    if r.sd == 0.0:
        if r.change == 0.0:
            return f"no change at all: the runs agree on every one of the {r.n} queries"
        return f"every one of the {r.n} queries changed by the same {_f(r.change, True)}: no spread to test against"
    if r.n < 2 or math.isnan(r.detectable):
        return f"{r.n} queries: too few to tell anything"
    caught = f"{r.n} queries catch a drop of {r.detectable:.4f} 80% of the time"
    if r.enough:
        return f"{caught}: enough to tell a drop of {r.detect:g}"
    need = f"{r.needed:,} queries would" if r.needed else "no practical number of queries would"
    return f"{caught}: too few to tell a drop of {r.detect:g} ({need})"


def row_sentence(r: GateRow, report: GateResult) -> str:
    """One measure's result as a sentence (the gate's report, the pytest helper's message)."""
    verdict = {"drop": "SIGNIFICANT DROP", "holds": "holds", "untested": "UNTESTED", "inconclusive": _INCONCLUSIVE}[
        r.verdict
    ]
    worse = "lower" if r.higher_is_better else "higher"
    return (
        f"{r.measure}: {verdict}: {_f(r.baseline_mean)} -> {_f(r.candidate_mean)}, change {_f(r.change, True)} "
        f"({_level(report)} interval [{_f(r.low, True)}, {_f(r.high, True)}]), tolerated {r.margin:g} {worse}, "
        f"p = {_p(r.p_value)} (Holm {_p(r.p_adjusted)}, alpha {report.alpha:g}); {tell(r)}"
    )


_INCONCLUSIVE = "inconclusive (beyond the tolerated drop, not significantly)"


def _state(report: GateResult, esc: Callable[[str], str] = str) -> str:
    """The gate's outcome in a few words: FAILS, CANNOT TELL, INCONCLUSIVE or HOLDS."""

    def names(v: str) -> str:
        return ", ".join(esc(m) for m in report.measures_with(v))

    if report.exit_code == 1:
        return f"FAILS: a significant drop in {names('drop')}"
    if report.exit_code == 2:
        return f"CANNOT TELL: {names('untested')} untested"
    if report.measures_with("inconclusive"):
        return (
            f"INCONCLUSIVE: {names('inconclusive')} dropped beyond the tolerance, not significantly "
            "(exit 0: the gate fails on significant drops only)"
        )
    return "HOLDS"


def _headline(report: GateResult) -> str:
    return f"ctxeval gate: {report.candidate} against the baseline {report.baseline}: {_state(report)}"


def _method(report: GateResult) -> str:
    methods = sorted({r.method for r in report.rows})
    return (
        f"test: {'; '.join(methods)}, of a drop beyond the tolerated one (H0: change >= -tolerated), "
        f"Holm across {len(report.rows)} measure{'s' if len(report.rows) != 1 else ''}, alpha {report.alpha:g}; "
        f"intervals: {_level(report)} (a measure fails when its interval lies wholly beyond the tolerated drop, "
        "before Holm)"
    )


def _queries(r: GateRow) -> str:
    return f"{r.n}" + (" (too few)" if r.sd > 0 and not r.enough else "")


def to_table(report: GateResult) -> str:
    header = [
        "measure",
        "baseline",
        "candidate",
        "change",
        f"{_level(report)} interval",
        "tolerated",
        "p",
        "p (Holm)",
        "verdict",
        "queries",
    ]
    rows = [
        [r.measure, _f(r.baseline_mean), _f(r.candidate_mean), _f(r.change, True), f"[{_f(r.low, True)}, {_f(r.high, True)}]",
         f"{r.margin:g}", _p(r.p_value), _p(r.p_adjusted), r.verdict.upper() if r.verdict in ("drop", "untested") else r.verdict,
         _queries(r)]
        for r in report.rows
    ]  # fmt: skip
    widths = [max(len(x) for x in col) for col in zip(header, *rows)]
    right = {1, 2, 3, 5, 6, 7, 9}

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))
        ).rstrip()

    out = [_headline(report), "", line(header), line(["-" * w for w in widths])]
    out += [line(r) for r in rows]
    out += ["", _method(report)]
    out += [f"{r.measure}: {tell(r)}" for r in report.rows]
    out += [f"note: {n}" for n in report.notes]
    return "\n".join(out) + "\n"


def _md(text: str) -> str:
    for ch in "\\`*_{}[]<>()#+-.!|":
        text = text.replace(ch, "\\" + ch)
    return text


def to_markdown(report: GateResult) -> str:
    """A GitHub-flavoured Markdown summary (write it to ``$GITHUB_STEP_SUMMARY``)."""
    icon = {0: ":white_check_mark:", 1: ":x:", 2: ":grey_question:"}[report.exit_code]
    if report.exit_code == 0 and report.measures_with("inconclusive"):
        icon = ":warning:"
    state = _state(report, _md)
    out = [
        f"### {icon} ctxeval gate: {_md(report.candidate)} against the baseline {_md(report.baseline)}: {state}",
        "",
        f"| measure | baseline | candidate | change | {_level(report)} interval | tolerated drop | p | p (Holm) | verdict | queries | large enough to tell? |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---|",
    ]
    for r in report.rows:
        verdict = f"**{r.verdict}**" if r.verdict in ("drop", "untested") else r.verdict
        out.append(
            f"| {_md(r.measure)} | {_f(r.baseline_mean)} | {_f(r.candidate_mean)} | {_f(r.change, True)} | "
            f"[{_f(r.low, True)}, {_f(r.high, True)}] | {r.margin:g} | {_p(r.p_value)} | {_p(r.p_adjusted)} | {verdict} | "
            f"{r.n} | {_md(tell(r))} |"
        )
    out += ["", _md(_method(report))]
    out += [f"- {_md(n)}" for n in report.notes]
    return "\n".join(out) + "\n"


def to_junit(report: GateResult) -> str:
    """JUnit XML: a ``testsuites`` with one ``testsuite``, one ``testcase`` per gated measure; a
    significant drop is a ``failure``, an untested measure an ``error`` (never ``skipped``: a gated
    measure is not optional); an inconclusive one passes, its sentence saying so."""
    attrs = {
        "name": "ctxeval gate",
        "tests": str(len(report.rows)),
        "failures": str(len(report.measures_with("drop"))),
        "errors": str(len(report.measures_with("untested"))),
        "skipped": "0",
        "time": "0",
    }
    root = ET.Element("testsuites", attrs)
    suite = ET.SubElement(root, "testsuite", dict(attrs, name=f"ctxeval gate: {report.candidate} vs {report.baseline}"))
    for r in report.rows:
        case = ET.SubElement(suite, "testcase", {"classname": "ctxeval.gate", "name": r.measure, "time": "0"})
        text = row_sentence(r, report)
        if r.verdict == "drop":
            ET.SubElement(case, "failure", {"message": text, "type": "SignificantDrop"}).text = text
        elif r.verdict == "untested":
            ET.SubElement(case, "error", {"message": text, "type": "Untested"}).text = text
        ET.SubElement(case, "system-out").text = text
    ET.SubElement(suite, "system-out").text = "\n".join([_method(report), *report.notes])
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


#: the annotation level of each verdict
_ANNOTATION = {"drop": "error", "untested": "error", "inconclusive": "warning", "holds": "notice"}


def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def to_annotations(report: GateResult) -> str:
    """GitHub Actions workflow commands, one per gated measure: ``::error`` for a significant drop or
    an untested measure, ``::warning`` for an inconclusive one, ``::notice`` for one that holds (its
    sentence says whether the queries are enough to tell)."""
    out = []
    for r in report.rows:
        kind = _ANNOTATION[r.verdict]
        title = _escape_property(f"ctxeval gate: {r.measure}")
        out.append(f"::{kind} title={title}::{_escape_data(row_sentence(r, report))}")
    return "\n".join(out) + "\n"


def power_lines(plans: Sequence[PowerPlan]) -> str:
    """``ctxeval power``'s plan as text, a few lines per measure."""
    lines = []
    for p in plans:
        need = f"{p.needed:,}" if p.needed else "no practical number of"
        head = f"{p.measure} (tolerated drop {p.margin:g}; sd of the per-query changes {p.sd:.4f}, {p.sd_source}):"
        if p.never:
            lines += [head, f"  {p.never}"]
            continue
        lines += [
            head,
            f"  to catch a drop of {p.drop:g} with probability {p.power:g} at alpha {p.alpha:g}: {need} queries",
            f"  with the baseline's {p.n} queries: a drop of {p.drop:g} is caught with probability "
            f"{p.power_now:.3f} (formula) / {p.simulated_now:.3f} (bootstrap check, 2,000 draws); "
            f"the smallest drop caught with probability {p.power:g} is {p.detectable:.4f}",
        ]
    return "\n".join(lines) + "\n"


class GateReport(GateResult):
    """The outcome of :func:`gate`: one row per gated measure (``rows``: the change, its interval and
    test, the margin, the verdict and what the queries can tell), with the settings (``to_dict``,
    ``to_json``, ``to_pandas``), and its text formats (``to_table``, ``to_markdown``, ``to_junit``,
    ``to_annotations``)."""

    @classmethod
    def of(cls, result: GateResult) -> GateReport:
        return cls(**{f.name: getattr(result, f.name) for f in fields(result)})

    def to_table(self) -> str:
        return to_table(self)

    def to_markdown(self) -> str:
        return to_markdown(self)

    def to_junit(self) -> str:
        return to_junit(self)

    def to_annotations(self) -> str:
        return to_annotations(self)


gate = reporting(gate_model, GateReport.of, GateReport, __name__)
