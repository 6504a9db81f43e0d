"""The HTML report (no browser): content against hand calculations and independent oracles, escaping,
offline-ness, determinism, optional sections, input errors and the missing-matplotlib error."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import _report_fixtures as fx
from _html_dom import Node, parse
from ctxeval import CtxevalError, InputError, diagnose
from ctxeval import DependencyError as ReportDependencyError
from ctxeval._demo import SYSTEMS, example_path
from ctxeval._render.html import CSP, render_html

TESTS = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def hand_page() -> str:
    return render_html(fx.hand_report())


@pytest.fixture(scope="module")
def example_page() -> str:
    return render_html(fx.example_report())


@pytest.fixture(scope="module")
def payload_page() -> str:
    return render_html(fx.payload_report())


def _table_cells(table: Node) -> dict[tuple[str, str], Node]:
    """(row header text, column header text) -> td node; the column header text is the measure name."""
    head = list(table.find("thead").find_all("th"))
    cols = []
    for th in head:
        direct = "".join(c for c in th.children if isinstance(c, str))  # without the direction note
        cols.append(direct.strip())
    out = {}
    for tr in table.find("tbody").find_all("tr"):
        cells = [c for c in tr.children if isinstance(c, Node)]
        row = cells[0]
        name = "".join(c for c in row.children if isinstance(c, str)).strip()
        for col, cell in zip(cols[1:], cells[1:]):
            out[(name, col)] = cell
    return out


def _marker(cell: Node) -> tuple[str, str] | None:
    sig = cell.find_all("span", cls="sig")
    if not sig:
        return None
    assert len(sig) == 1
    kind = (sig[0].classes - {"sig"}).pop()
    return sig[0].text(), kind


def _value(cell: Node) -> str:
    return "".join(c for c in cell.children if isinstance(c, str)).strip()


# --------------------------------------------------------------------------------------------------
# content of the hand report (expected values worked out by hand from the fixture's numbers)
# --------------------------------------------------------------------------------------------------


def test_summary_means_ci_best_and_markers(hand_page):
    root, _ = parse(hand_page)
    cells = _table_cells(root.find(id="summary").find("table"))
    # means: nDCG@10 = (.5+.2+.7+.1)/4 = .375, (.6+.2+.9+.3)/4 = .5, (.4+.1+.7+0)/4 = .3
    # Harm@5 = (.4+.2+0+.6)/4 = .3, (.2+0+.2)/3 = .1333 (q4 NA), (.6+.4+.2+.8)/4 = .5
    # MyScore@3 = (1+2+3)/3 = 2 (q3 NA), (2+1+4+3)/4 = 2.5, (.5+2+1+1)/4 = 1.125
    expected = {
        ("base", "nDCG@10"): "0.3750", ("better", "nDCG@10"): "0.5000", ("worse", "nDCG@10"): "0.3000",
        ("base", "Harm@5"): "0.3000", ("better", "Harm@5"): "0.1333", ("worse", "Harm@5"): "0.5000",
        ("base", "MyScore@3"): "2.0000", ("better", "MyScore@3"): "2.5000", ("worse", "MyScore@3"): "1.1250",
    }  # fmt: skip
    assert {k: _value(v) for k, v in cells.items()} == expected
    # the fixture's CIs are mean +- 0.1
    assert cells[("base", "nDCG@10")].find("span", cls="ci").text() == "[0.2750, 0.4750]"
    # best: highest nDCG (better), LOWEST Harm (better: Harm is lower-is-better), none for the unknown measure
    best = {k for k, v in cells.items() if "best" in v.classes}
    assert best == {("better", "nDCG@10"), ("better", "Harm@5")}
    # markers: significant comparisons only; as in the text reports, ▲ = better and ▼ = worse in the
    # measure's direction (Harm: lower is better); unknown direction: ▲ = higher, uncoloured
    markers = {k: _marker(v) for k, v in cells.items() if _marker(v)}
    assert markers == {
        ("better", "nDCG@10"): ("▲", "better"),
        ("better", "Harm@5"): ("▲", "better"),
        ("better", "MyScore@3"): ("▲", "neutral"),
        ("worse", "Harm@5"): ("▼", "worse"),
    }
    heads = root.find(id="summary").find("thead").text()
    assert "lower is better" in heads and "direction unknown" in heads


def test_comparisons_table(hand_page):
    root, _ = parse(hand_page)
    rows = root.find(id="comparisons").find("tbody").find_all("tr")
    assert len(rows) == 6
    texts = [[c.text().strip() for c in r.children if isinstance(c, Node)] for r in rows]
    # better vs base on Harm@5: diff = 0.4/3 - 0.3 = -0.1667; p adj. = 2 p = 0.04
    harm = next(t for t in texts if t[0] == "better" and t[1] == "Harm@5")
    assert harm[2:9] == ["0.1333", "0.3000", "-0.1667▲", "[-0.0500, 0.2000]", "0.0200", "0.0400", "yes"]
    assert harm[9:] == ["2/1/1", "4", "0"]


def _captions(section: Node) -> list[str]:
    return [" ".join(fc.text().split()) for fc in section.find_all("figcaption")]


def test_per_query_difference_counts(hand_page):
    root, _ = parse(hand_page)
    caps = _captions(root.find(id="per-query"))
    # by hand from HAND_PER_QUERY (run - base per query; q with an NA on either side dropped):
    assert caps == [
        "better − base: 3 better, 1 tied, 0 worse (4 paired queries)",  # nDCG: +.1, 0, +.2, +.2
        "worse − base: 0 better, 1 tied, 3 worse (4 paired queries)",  # -.1, -.1, 0, -.1
        "better − base: 2 better, 0 tied, 1 worse (3 paired queries; 1 dropped (NA))",  # Harm: -.2, -.2, +.2, NA
        "worse − base: 0 better, 0 tied, 4 worse (4 paired queries)",  # +.2 x 4 (more harm = worse)
        "better − base: 1 higher, 1 tied, 1 lower (3 paired queries; 1 dropped (NA))",  # MyScore: +1, -1, NA, 0
        "worse − base: 0 higher, 1 tied, 2 lower (3 paired queries; 1 dropped (NA))",  # -.5, 0, NA, -2
    ]
    heads = [h.text() for h in root.find(id="per-query").find_all("h3")]
    assert heads == fx.HAND_MEASURES


def test_proc_section_counts_by_hand(hand_page):
    root, _ = parse(hand_page)
    sec = root.find(id="proc")
    rows = [[c.text().strip() for c in r.children if isinstance(c, Node)] for r in sec.find("tbody").find_all("tr")]
    # thresholds 0.8: base q1 (1, .9) healthy, q2 (.5, 1) retrieval, q3 (.8, .4) selection, q4 NA undefined;
    # better q1 healthy, q2 (.9, .85) healthy, q3 (0, NA) retrieval, q4 (1, .1) selection; no query fails both
    assert rows == [["base", "4", "1", "1", "0", "1", "1"], ["better", "4", "1", "1", "0", "2", "0"]]
    assert _captions(sec) == [
        "base: 3 queries plotted, 1 not plotted (PROC or %PROC NA)",
        "better: 3 queries plotted, 1 not plotted (PROC or %PROC NA)",
    ]


def test_distraction_section(hand_page):
    root, _ = parse(hand_page)
    sec = root.find(id="distraction")
    table = sec.find("table", cls="distraction")
    cells = _table_cells(table)
    verdicts = {
        k[0]: (v.find("span", cls="verdict").text(), v.find("span", cls="verdict").classes)
        for k, v in cells.items()
        if k[1] == "verdict"
    }
    assert {k: (t, c - {"verdict"}) for k, (t, c) in verdicts.items()} == {
        "base": ("RISKY", {"v-risky"}),
        "better": ("SAFE", {"v-safe"}),
        "worse": ("DANGEROUS", {"v-danger"}),
    }
    best = {k for k, v in cells.items() if "best" in v.classes}
    # RR, nDCG@5: highest (better); Harm@5, distractor rate, distractor harm: lowest (better)
    assert best == {("better", c) for c in ("RR", "nDCG@5", "Harm@5", "distractor rate", "distractor harm")}
    assert _value(cells[("worse", "hidden harm")]) == "NA"
    # best fixed k: shown because one row has it, NA where a row lacks it
    assert [_value(cells[(r, "best fixed k")]) for r in ("base", "better", "worse")] == ["NA", "4", "NA"]
    # every further setting of the distraction table is shown
    kv = {r.find("th").text(): r.find("td").text() for r in sec.find("table", cls="kv").find_all("tr")}
    assert json.loads(kv["verdict_thresholds"]) == {"safe": 0.1, "risky": 0.5}
    assert "relative score >= 0.9" in kv["notes"]
    summaries = [s.text().strip() for s in sec.find_all("summary")]
    assert summaries == ["Worst distractors of base (1)", "Worst distractors of worse (2)"]
    assert "known distractor" in sec.text() and "hard negative (score)" in sec.text()


def test_strata_section(hand_page):
    root, _ = parse(hand_page)
    sec = root.find(id="strata")
    blocks = sec.find_all("div", cls="stratum")
    assert [b.find("h3").text() for b in blocks] == ["factoid", "num_rel:2-5"]
    assert [bool(b.find_all("span", cls="warn")) for b in blocks] == [True, False]
    cells = _table_cells(blocks[0].find("table"))
    markers = {k: _marker(v) for k, v in cells.items() if _marker(v)}
    assert markers == {("better", "nDCG@10"): ("▲", "better")}  # the stratum's own comparisons
    assert not any(_marker(v) for v in _table_cells(blocks[1].find("table")).values())
    assert not blocks[1].find_all("span", cls="ci")  # that stratum has no CIs


def test_settings_and_accounting_shown(hand_page):
    root, _ = parse(hand_page)
    sec = root.find(id="settings")
    rows = {r.find("th").text(): r.find("td").text() for r in sec.find("table", cls="kv").find_all("tr")}
    rep = fx.hand_report()
    assert list(rows) == list(rep["settings"])
    assert rows["seed"] == "42" and rows["correction"] == "holm" and rows["grade_map"] == "none"
    assert json.loads(rows["pool"]) == {"depth": None}
    assert sec.text().count("missing_policy") == 3


# --------------------------------------------------------------------------------------------------
# the report built from real evaluate() results on the bundled example
# --------------------------------------------------------------------------------------------------


def test_example_per_query_counts_match_evaluate(example_page):
    """Captions against counts computed here from evaluate's per-query arrays (not from the dict)."""
    result = fx.example_result()
    base = result[fx.EXAMPLE_BASELINE]
    expected = []
    for m in result.measures:
        for r in result.runs:
            if r.name == fx.EXAMPLE_BASELINE:
                continue
            x, b = r.values[m], base.values[m]
            ok = ~(np.isnan(x) | np.isnan(b))
            d = x[ok] - b[ok]
            up, down = int((d > 0).sum()), int((d < 0).sum())
            better, worse = (up, down) if m.spec.higher_is_better else (down, up)
            text = f"{r.name} − {fx.EXAMPLE_BASELINE}: {better} better, {int((d == 0).sum())} tied, {worse} worse ({int(ok.sum())} paired queries"
            expected.append(text + (f"; {int((~ok).sum())} dropped (NA))" if (~ok).any() else ")"))
    root, _ = parse(example_page)
    assert _captions(root.find(id="per-query")) == expected


def test_example_proc_counts_match_diagnose(example_page):
    """The PROC section classifies queries as ctxeval.diagnose does (an independent implementation)."""
    root, _ = parse(example_page)
    rows = {}
    for tr in root.find(id="proc").find("tbody").find_all("tr"):
        cells = [c.text().strip() for c in tr.children if isinstance(c, Node)]
        rows[cells[0]] = [int(c) for c in cells[1:]]
    qrels = str(example_path("qrels.txt"))
    assert len(rows) == len(SYSTEMS)
    for name, pool in SYSTEMS.items():
        d = diagnose(qrels, str(example_path(f"runs/{name}")), pool=str(example_path(f"runs/{pool or name}")), k=10)
        verdicts = Counter(q.verdict for q in d.queries)
        run = name.removesuffix(".run")
        assert rows[run] == [
            len(d.queries),
            verdicts["retrieval"],
            verdicts["selection"],
            verdicts["both"],
            verdicts["healthy"],
            verdicts["undefined"],
        ]


def test_example_page_has_every_section_and_plot(example_page):
    rep = fx.example_report()
    root, _ = parse(example_page)
    for sec in ("summary", "comparisons", "curves", "pr", "per-query", "proc", "distraction", "strata", "settings"):
        assert root.find_all("section", id=sec), sec
    families = {s["measure"] for s in rep["curves"]["series"]}
    n_plots = len(families) + 1 + len(rep["measures"]) * (len(rep["runs"]) - 1) + len(rep["proc"]["series"])
    assert len(root.find_all("svg")) == n_plots
    assert len(root.find(id="summary").find("tbody").find_all("tr")) == len(rep["runs"])


# --------------------------------------------------------------------------------------------------
# safety: escaping, nothing executable, nothing loaded
# --------------------------------------------------------------------------------------------------


def _svgs(page: str) -> list[str]:
    return re.findall(r"<svg\b.*?</svg>", page, flags=re.DOTALL)


def _assert_inert(page: str) -> Node:
    root, b = parse(page)
    tags = {t for t, _ in b.start_tags}
    assert not tags & {"script", "img", "iframe", "object", "embed", "form", "input", "base", "foreignobject", "frame"}
    for tag, attrs in b.start_tags:
        for k, v in attrs:
            assert not k.lower().startswith("on"), (tag, k)
            if k in ("href", "src", "xlink:href", "action", "formaction", "srcdoc"):
                assert v is not None and v.startswith(("#", "data:")), (tag, k, v)
        if tag == "a":
            assert dict(attrs)["href"].startswith("#")
        if tag == "link":
            assert dict(attrs) == {"rel": "icon", "href": "data:,"}
    assert not re.search(r"url\((?!#)", page), "a url() other than a fragment"
    assert "@import" not in page
    return root


def test_payloads_are_text_never_markup(payload_page):
    root = _assert_inert(payload_page)
    assert (
        "<script" not in payload_page.lower()
        and "<img" not in payload_page.lower()
        and "<iframe" not in payload_page.lower()
    )
    text = root.text()
    for p in fx.PAYLOADS:
        assert p in text, p  # shown verbatim, as text
    _, b = parse(payload_page)
    for _, attrs in b.start_tags:
        for _, v in attrs:
            assert "alert" not in (v or "") and "__xss" not in (v or "")
    # nothing from the input reaches the plots
    svgs = _svgs(payload_page)
    assert len(svgs) == 2 + 1 + 6 + 2
    for svg in svgs:
        assert "alert" not in svg and "xss" not in svg
    assert root.find("title").text().startswith("ctxeval report: 3 runs against <script>window.__xss=1")


def test_page_is_offline_and_has_csp(hand_page, example_page):
    for page in (hand_page, example_page):
        _assert_inert(page)
        head = page[: page.index("</head>")]
        assert f'<meta http-equiv="Content-Security-Policy" content="{CSP}">' in head
        assert head.index("Content-Security-Policy") < head.index("<title>")
        assert "default-src 'none'" in CSP and "script-src" not in CSP
        # no http(s) reference except SVG namespace declarations
        refs = re.findall(r'(\S+)="(https?://[^"]*)"', page)
        assert {k for k, _ in refs} <= {"xmlns", "xmlns:xlink"}, refs


def test_svg_ids_unique_and_references_resolve(example_page):
    root, b = parse(example_page)
    ids = [dict(a).get("id") for _, a in b.start_tags if dict(a).get("id")]
    dup = [i for i, n in Counter(ids).items() if n > 1]
    assert not dup, dup[:5]
    refs = set(re.findall(r'href="#([^"]+)"', example_page)) | set(re.findall(r"url\(#([^)]+)\)", example_page))
    assert refs and refs <= set(ids)
    # every plot is labelled by its caption
    for svg in root.find_all("svg"):
        cap = svg.attrs["aria-labelledby"]
        assert root.find_all("figcaption", id=cap)


BENIGN = ("alpha", "beta")


def _mini(names: tuple[str, str], qid: str, setting: str) -> dict:
    return {
        "baseline": names[0],
        "measures": ["AP"],
        "runs": [
            {"name": names[0], "aggregate": {"AP": 0.25}, "ci": {"AP": [0.2, 0.3]}, "queries": {"evaluated": 1}},
            {"name": names[1], "aggregate": {"AP": 0.5}, "queries": {"evaluated": 1}},
        ],
        "comparisons": [{"run": names[1], "measure": "AP", "diff": 0.25, "significant": True, "p_value": 0.01}],
        "distraction": {
            "k": 5,
            "rows": [
                {"run": names[1], "verdict": setting, "worst_distractors": [{"query": qid, "doc": setting, "rank": 1}]}
            ],
        },
        "strata": {setting: {"source": qid, "n_queries": 1, "runs": [{"name": names[1], "aggregate": {"AP": 0.5}}]}},
        "settings": {"qrels": setting, "extra": [qid, setting]},
    }


def _shape(page: str) -> list[tuple[str, tuple[str, ...]]]:
    _, b = parse(page)
    return [(t, tuple(sorted(k for k, _ in a))) for t, a in b.start_tags]


@given(
    names=st.lists(st.text(min_size=1, max_size=60), min_size=2, max_size=2, unique=True),
    qid=st.text(min_size=1, max_size=20),
    setting=st.text(min_size=1, max_size=30),
)
def test_any_string_stays_text(names, qid, setting):
    """Whatever the names, the page's element structure is that of a page with benign names, and every
    string shows up verbatim in the text."""
    page = render_html(_mini((names[0], names[1]), qid, setting))
    reference = render_html(_mini(BENIGN, "q1", "s"))
    assert _shape(page) == _shape(reference)
    root, _ = parse(page)
    text = root.text()
    for s in (*names, qid, setting):
        assert s in text


# --------------------------------------------------------------------------------------------------
# determinism
# --------------------------------------------------------------------------------------------------


_SCRIPT = """
import hashlib, sys
sys.path.insert(0, {tests!r})
import _report_fixtures as fx
from ctxeval._render.html import render_html
print(hashlib.sha256(render_html(fx.hand_report()).encode()).hexdigest())
"""


def test_same_input_same_bytes(hand_page):
    again = render_html(fx.hand_report())
    assert again == hand_page
    digest = hashlib.sha256(hand_page.encode()).hexdigest()
    for seed in ("1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "MPLBACKEND": "svg"}
        out = subprocess.run(
            [sys.executable, "-c", _SCRIPT.format(tests=str(TESTS))],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        assert out.stdout.strip() == digest


def test_user_matplotlib_settings_neither_leak_in_nor_get_changed(hand_page):
    import matplotlib

    changed = {
        "lines.linewidth": 7.0,
        "font.size": 21.0,
        "svg.fonttype": "path",
        "axes.facecolor": "black",
        "svg.hashsalt": None,
    }
    with matplotlib.rc_context(changed):
        page = render_html(fx.hand_report())
        after = {k: matplotlib.rcParams[k] for k in changed}
    assert page == hand_page
    assert after == changed


def test_no_date_or_creator_in_svg(hand_page):
    for svg in _svgs(hand_page):
        assert "<metadata" not in svg and "dc:date" not in svg and "<!--" not in svg
        assert not re.search(r"\b20\d\d-\d\d-\d\d", svg)


# --------------------------------------------------------------------------------------------------
# optional parts
# --------------------------------------------------------------------------------------------------

OPTIONAL = {
    "comparisons": "comparisons",
    "curves": "curves",
    "pr_curves": "pr",
    "proc": "proc",
    "distraction": "distraction",
    "strata": "strata",
}


@pytest.mark.parametrize("key", [*OPTIONAL, "per_query"])
@pytest.mark.parametrize("how", ["absent", "null"])
def test_optional_parts(key, how):
    rep = fx.hand_report()
    if key == "per_query":
        for r in rep["runs"]:
            if how == "absent":
                del r["per_query"]
            else:
                r["per_query"] = None
        gone = "per-query"
    else:
        if how == "absent":
            del rep[key]
        else:
            rep[key] = None
        gone = OPTIONAL[key]
    root, _ = parse(render_html(rep))
    present = {s.attrs["id"] for s in root.find_all("section")}
    expected = {"summary", "settings", *OPTIONAL.values(), "per-query"} - {gone}
    assert present == expected
    nav = [a.attrs["href"][1:] for a in root.find("nav").find_all("a")]
    assert gone not in nav and set(nav) == expected
    assert "Not in this report" in root.find("header").text()
    if key == "comparisons":  # without comparisons there is nothing to mark
        assert not root.find(id="summary").find_all("span", cls="sig")


def test_minimal_report_has_no_plots():
    rep = {"baseline": "a", "measures": ["nDCG@10"], "runs": [{"name": "a", "aggregate": {"nDCG@10": None}}]}
    page = render_html(rep)
    root, _ = parse(page)
    assert {s.attrs["id"] for s in root.find_all("section")} == {"summary", "settings"}
    assert "<svg" not in page
    cells = _table_cells(root.find(id="summary").find("table"))
    assert _value(cells[("a", "nDCG@10")]) == "NA"


# --------------------------------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------------------------------


def _set(path, value):
    def mutate(rep):
        obj = rep
        for k in path[:-1]:
            obj = obj[k]
        obj[path[-1]] = value
        return rep

    return mutate


@pytest.mark.parametrize(
    ("mutate", "where"),
    [
        (lambda rep: [rep], "report (top level): expected an object"),
        (_set(("baseline",), "nobody"), "report baseline: must be one of the runs"),
        (_set(("measures",), "nDCG@10"), "report measures: expected a list"),
        (_set(("runs",), []), "report runs: expected at least one run"),
        (_set(("runs", 1, "name"), "base"), "report runs: run names must be unique"),
        (
            _set(("runs", 1, "aggregate", "nDCG@10"), "0.5"),
            "report runs[1].aggregate['nDCG@10']: expected a number or null, got '0.5'",
        ),
        (_set(("runs", 0, "ci", "Harm@5"), [0.1]), "report runs[0].ci['Harm@5']: expected [low, high]"),
        (_set(("runs", 2, "aggregate", "Harm@5"), True), "expected a number or null, got True"),
        (_set(("curves", "series", 0, "run"), "nope"), "report curves.series[0].run: names no run of the report"),
        (
            _set(("curves", "series", 1, "values"), [0.1]),
            "report curves.series[1].values: expected 5 values (one per k)",
        ),
        (_set(("pr_curves", "series", 2, "precision", 3), "x"), "report pr_curves.series[2].precision[3]"),
        (
            _set(("proc", "series", 0, "per_query", "q1"), [1.0]),
            "report proc.series[0].per_query['q1']: expected [PROC, %PROC]",
        ),
        (_set(("distraction", "rows", 0, "distractor_rate"), {}), "report distraction.rows[0].distractor_rate"),
        (_set(("strata", "factoid", "runs"), "all"), "report strata['factoid'].runs: expected a list"),
        (_set(("comparisons", 0, "diff"), "big"), "report comparisons[0].diff: expected a number or null, got 'big'"),
        (
            lambda rep: rep["comparisons"].append(dict(rep["comparisons"][0])) or rep,
            "report comparisons[6]: a second comparison of the same runs and measure, got ['better', 'nDCG@10', 'base']",
        ),
        (
            _set(("comparisons", 1, "significant"), "yes"),
            "report comparisons[1].significant: expected true, false or null",
        ),
        (
            _set(("strata", "factoid", "comparisons", 0, "run"), "ghost"),
            "report strata['factoid'].comparisons[0].run: names no run",
        ),
    ],
)
def test_bad_input_names_the_place(mutate, where):
    rep = mutate(fx.hand_report())
    with pytest.raises(InputError) as err:
        render_html(rep)
    assert where in str(err.value)


def test_missing_matplotlib_says_how_to_install(monkeypatch):
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes "import matplotlib" raise ImportError
    with pytest.raises(ReportDependencyError) as err:
        render_html(fx.hand_report())
    assert "pip install 'ctxeval[report]'" in str(err.value)
    assert isinstance(err.value, CtxevalError) and isinstance(err.value, ImportError)


def test_input_is_not_modified():
    rep = fx.hand_report()
    before = copy.deepcopy(rep)
    render_html(rep)
    assert rep == before


# --------------------------------------------------------------------------------------------------
# many queries: per-query plots are binned, counts stay exact, the page stays small
# --------------------------------------------------------------------------------------------------


@given(
    d=st.lists(st.floats(-1, 1, allow_nan=False), min_size=1, max_size=300).map(lambda v: np.sort(np.array(v))),
    max_steps=st.integers(1, 40),
)
def test_envelope_never_hides_a_difference(d, max_steps):
    from ctxeval._render.html.plots import _envelope

    edges, pos, neg = _envelope(d, max_steps)
    n = d.size
    assert edges[0] == 0.5 and edges[-1] == n + 0.5 and np.all(np.diff(edges) > 0)
    assert pos.size == neg.size == edges.size - 1
    assert pos.size == (min(n, max_steps))
    # every query i (at x = i) falls in one step, drawn at least as far from 0 as its difference
    x = np.arange(1, n + 1)
    step = np.searchsorted(edges, x) - 1
    assert np.all(pos[step] >= np.maximum(d, 0)) and np.all(neg[step] <= np.minimum(d, 0))
    # and nothing is drawn beyond the extremes
    assert pos.max() == max(d.max(), 0.0) and neg.min() == min(d.min(), 0.0)
    assert np.all(pos >= 0) and np.all(neg <= 0)


def test_many_queries_are_binned_with_exact_counts():
    from ctxeval._render.html.plots import MAX_STEPS

    rng = np.random.default_rng(7)
    n = 3 * MAX_STEPS + 17
    a, b = rng.integers(0, 5, n) / 4, rng.integers(0, 5, n) / 4  # many ties on purpose
    b[:5] = np.nan
    rep = {
        "baseline": "a",
        "measures": ["AP"],
        "runs": [
            {
                "name": "a",
                "aggregate": {"AP": float(np.mean(a))},
                "per_query": {f"q{i}": {"AP": float(a[i])} for i in range(n)},
            },
            {
                "name": "b",
                "aggregate": {"AP": float(np.nanmean(b))},
                "per_query": {f"q{i}": {"AP": None if np.isnan(b[i]) else float(b[i])} for i in range(n)},
            },
        ],
    }
    page = render_html(rep)
    root, _ = parse(page)
    d = (b - a)[5:]
    better, tied, worse = int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum())
    expected = (
        f"b − a: {better} better, {tied} tied, {worse} worse ({n - 5} paired queries, drawn as the envelope of "
        f"{MAX_STEPS} bins of consecutive queries; 5 dropped (NA))"
    )
    assert _captions(root.find(id="per-query")) == [expected]
    assert len(_svgs(page)[0]) < 120_000


# --------------------------------------------------------------------------------------------------
# agreement with compare's definitions (audit of issue 5)
# --------------------------------------------------------------------------------------------------


def _two_run_report(measures, aggregates, settings):
    comps = [
        {"run": "b", "measure": m, "mean": aggregates[m][1], "baseline_mean": aggregates[m][0], "diff": aggregates[m][1] - aggregates[m][0],
         "ci": [0.0, 1.0], "p_value": 0.04, "p_adjusted": 0.04, "significant": False, "wins": 1, "ties": 0, "losses": 0, "n_queries": 1, "n_dropped": 0}
        for m in measures
    ]  # fmt: skip
    runs = [
        {"name": n, "aggregate": {m: aggregates[m][i] for m in measures}, "ci": {m: [aggregates[m][i] - 1, aggregates[m][i] + 1] for m in measures}}
        for i, n in enumerate(("a", "b"))
    ]  # fmt: skip
    return {"baseline": "a", "measures": measures, "runs": runs, "comparisons": comps, "settings": settings}


def test_counts_are_not_ranked_and_the_legend_says_what_each_cell_is():
    # compare's text reports do not rank counts (a sum over queries depends on how many queries a run
    # has); the HTML report must agree, and say that the count is a sum and gm_map a geometric mean
    rep = _two_run_report(
        ["NumRelRet", "gm_map", "nDCG@10"],
        {"NumRelRet": (10.0, 12.0), "gm_map": (0.2, 0.3), "nDCG@10": (0.5, 0.4)},
        {"test": "randomization", "correction": "holm", "alpha": 0.05, "confidence": 0.9},
    )
    root, _ = parse(render_html(rep))
    summary = root.find(id="summary")
    cells = _table_cells(summary.find("table"))
    assert {k for k, v in cells.items() if "best" in v.classes} == {("b", "gm_map"), ("a", "nDCG@10")}
    note = " ".join(summary.find("p", cls="note").text().split())
    assert "NumRelRet: sum over queries, not ranked" in note and "gm_map: geometric mean" in note
    # significant means p_adjusted < alpha (compare's rule), and the level is the report's, 90 %
    assert "p < 0.05" in note and "≤" not in note
    assert "90 % confidence interval" in note and "95 %" not in render_html(rep)


def test_per_query_ties_use_compare_tolerance():
    # compare counts |run - baseline| <= settings.tie_tolerance (1e-12) as a tie; the plot captions must
    # give the same wins/ties/losses as the comparison table (0.1 + 0.2 - 0.3 is 5.6e-17, not a win)
    rep = _two_run_report(["P@10"], {"P@10": (0.3, 0.1 + 0.2)}, {"tie_tolerance": 1e-12})
    rep["runs"][0]["per_query"] = {"q1": {"P@10": 0.3}, "q2": {"P@10": 0.5}}
    rep["runs"][1]["per_query"] = {"q1": {"P@10": 0.1 + 0.2}, "q2": {"P@10": 0.6}}
    root, _ = parse(render_html(rep))
    assert _captions(root.find(id="per-query")) == ["b − a: 1 better, 1 tied, 0 worse (2 paired queries)"]
