"""The HTML report in a real browser: headless Debian Chromium driven by Playwright.

The page must load from a file with no console errors, no page errors and no request other than the
file itself (it is offline), show its key elements, and run nothing that comes from the input.

Chromium is Debian's ``chromium`` package (``/usr/bin/chromium``, or ``$CTXEVAL_CHROMIUM``); ``.ci/run``
installs it when missing. Playwright never downloads a browser here. These tests are skipped only when
``CTXEVAL_SKIP_BROWSER=1``; otherwise a missing browser or driver is a failure, not a silent skip.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import _report_fixtures as fx
from ctxeval._render.html import render_html

CHROMIUM = os.environ.get("CTXEVAL_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]

pytestmark = pytest.mark.slow  # a headless browser starts for each page

if os.environ.get("CTXEVAL_SKIP_BROWSER") == "1":
    pytest.skip("browser tests skipped: CTXEVAL_SKIP_BROWSER=1", allow_module_level=True)


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the browser tests need Playwright: pip install -e '.[test]' (or set CTXEVAL_SKIP_BROWSER=1)")
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(
            f"the browser tests need Chromium at {CHROMIUM}: apt-get install -y --no-install-recommends chromium "
            "(.ci/run does this), or set CTXEVAL_CHROMIUM=/path/to/chromium, or CTXEVAL_SKIP_BROWSER=1 to skip"
        )
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


class Visit:
    """One page load with everything the page did recorded."""

    def __init__(self, browser, path: Path, width: int = 1280) -> None:
        self.url = path.resolve().as_uri()
        self.requests: list[str] = []
        self.failed: list[str] = []
        self.console: list[tuple[str, str]] = []
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.context = browser.new_context(viewport={"width": width, "height": 900}, java_script_enabled=True)
        # nothing may leave the machine: abort every http(s)/ws request (and record it)
        self.context.route(re.compile(r"^(https?|wss?)://"), lambda route: route.abort())
        page = self.context.new_page()
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("requestfailed", lambda r: self.failed.append(r.url))
        page.on("console", lambda m: self.console.append((m.type, m.text)))
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("dialog", self._dialog)
        page.goto(self.url, wait_until="load")
        self.page = page

    def _dialog(self, dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def close(self) -> None:
        self.context.close()

    def assert_clean(self) -> None:
        assert self.requests == [self.url], f"requests other than the file itself: {self.requests}"
        assert not self.failed, self.failed
        assert not [m for m in self.console if m[0] in ("error", "warning")], self.console
        assert not self.errors, self.errors
        assert not self.dialogs, self.dialogs


def test_report_loads_offline_with_its_key_elements(browser, tmp_path):
    rep = fx.example_report()
    path = tmp_path / "report.html"
    path.write_text(render_html(rep), encoding="utf-8")
    v = Visit(browser, path)
    try:
        page = v.page
        v.assert_clean()
        assert page.title() == "ctxeval report: 5 runs against bm25"
        # the summary table: one row per run, one column per measure
        assert page.locator("#summary table.summary tbody tr").count() == len(rep["runs"])
        assert page.locator("#summary table.summary thead th").count() == 1 + len(rep["measures"])
        # every plot section holds rendered SVG with a real size
        n_fam = len({s["measure"] for s in rep["curves"]["series"]})
        expected = {
            "#curves": n_fam,
            "#pr": 1,
            "#per-query": len(rep["measures"]) * (len(rep["runs"]) - 1),
            "#proc": len(rep["proc"]["series"]),
        }
        for section, n in expected.items():
            boxes = page.eval_on_selector_all(
                f"{section} svg.plot",
                "els => els.map(e => { const r = e.getBoundingClientRect(); return [r.width, r.height]; })",
            )
            assert len(boxes) == n, section
            assert all(w > 200 and h > 100 for w, h in boxes), (section, boxes)
            # the plot's drawing is there (paths, not an empty box)
            assert page.locator(f"{section} svg.plot path").count() > 10 * n
        # the distraction table with a verdict per run
        assert page.locator("#distraction table.distraction tbody tr").count() == len(rep["distraction"]["rows"])
        assert page.locator("#distraction .verdict").all_inner_texts() == [
            r["verdict"] for r in rep["distraction"]["rows"]
        ]
        assert page.locator("#strata .stratum").count() == len(rep["strata"])
        assert page.locator("#settings table.kv tr").count() == len(rep["settings"])
        # the CSP is in force
        csp = page.eval_on_selector('meta[http-equiv="Content-Security-Policy"]', "m => m.content")
        assert "default-src 'none'" in csp
        top = tmp_path / "report-top.png"
        page.screenshot(path=str(top))
        shot = tmp_path / "report.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 50_000
        print(f"screenshots: {shot} {top}")
        # details open without any script
        table = page.locator("#distraction details").first.locator("table")
        assert not table.is_visible()
        page.locator("#distraction details summary").first.click()
        assert table.is_visible()
        v.assert_clean()  # still nothing after the clicks
    finally:
        v.close()


def _strip_csp(page: str) -> str:
    out, n = re.subn(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page)
    assert n == 1
    return out


@pytest.mark.parametrize("csp", [True, False], ids=["with-csp", "escaping-alone"])
def test_hostile_names_do_not_execute(browser, tmp_path, csp):
    """Run names, query ids, doc ids, measure names and settings full of script payloads: nothing runs,
    nothing loads, and the payloads are shown as text. Without the CSP too: escaping alone holds."""
    page_html = render_html(fx.payload_report())
    if not csp:
        page_html = _strip_csp(page_html)
    path = tmp_path / "hostile.html"
    path.write_text(page_html, encoding="utf-8")
    v = Visit(browser, path)
    try:
        v.assert_clean()
        assert v.page.evaluate("() => window.__xss === undefined")
        assert (
            v.page.evaluate("() => document.querySelectorAll('script, img, iframe, [onerror], [onload]').length") == 0
        )
        for d in v.page.locator("details summary").all():  # open every collapsed table, too
            d.click()
        body = v.page.inner_text("body")
        for p in fx.PAYLOADS:
            assert p in body.replace("\u00a0", " "), p
        assert v.page.evaluate("() => window.__xss === undefined")
        v.assert_clean()
        v.page.evaluate("() => window.scrollTo(0, 0)")
        v.page.screenshot(path=str(tmp_path / "hostile.png"), full_page=False)
    finally:
        v.close()


def test_the_harness_sees_execution(browser, tmp_path):
    """Control: the same checks catch a payload that is NOT escaped (so the test above can fail)."""
    page_html = _strip_csp(render_html(fx.hand_report()))
    page_html = page_html.replace("<footer>", f"<footer>{fx.PAYLOADS[1]}{fx.PAYLOADS[0]}", 1)
    path = tmp_path / "control.html"
    path.write_text(page_html, encoding="utf-8")
    v = Visit(browser, path)
    try:
        assert v.page.evaluate("() => window.__xss") in (1, 2)
        assert v.dialogs == ["1"] * len(v.dialogs) and len(v.dialogs) >= 1
        assert len(v.requests) > 1, v.requests  # the img src=x was fetched: the request log works too
    finally:
        v.close()


def test_hostile_names_through_the_real_compare_do_not_execute(browser, tmp_path):
    """End to end: run names, query ids and doc ids full of payloads go through ``compare`` (notes,
    strata, curves, PROC, the distraction table's worst distractors) and ``Report.to_html``; nothing runs."""
    from ctxeval import Run, compare

    p = fx.PAYLOADS
    qrels = {f"{p[0]} q{i}": {f"{p[1]} rel{i}": 5, f"{p[5]} dis{i}": 1} for i in range(6)}
    base = {q: {d: float(len(d) % 7) for d in docs} for q, docs in qrels.items()}
    new = {
        q: {**{d: float(i) for i, d in enumerate(docs)}, f"{p[3]} other": 9.0} for q, docs in list(qrels.items())[:5]
    }
    runs = [Run.from_dict(base, name=p[0] + " base"), Run.from_dict(new, name=p[1] + " new")]
    strata = {q: [p[2] + " stratum", p[4]] for q in list(qrels)[:3]}
    rep = compare(
        qrels,
        runs,
        ["nDCG@3", "RA-nWG@2", "DistractorRate@3"],
        strata=strata,
        sections={"curves_k": "1:3"},
        policies={"missing": "ignore"},
        stats={"permutations": 200, "resamples": 200},
    )
    d = rep.to_dict()
    assert d["distraction"] and any(p[5] in w["doc"] for r in d["distraction"]["rows"] for w in r["worst_distractors"])
    assert any(p[1] in n for n in d["settings"]["notes"])  # the unpaired-queries note names the run
    path = tmp_path / "hostile-compare.html"
    path.write_text(rep.to_html(), encoding="utf-8")
    v = Visit(browser, path)
    try:
        v.assert_clean()
        for s in v.page.locator("details summary").all():
            s.click()
        assert v.page.evaluate("() => window.__xss === undefined")
        assert (
            v.page.evaluate("() => document.querySelectorAll('script, img, iframe, [onerror], [onload]').length") == 0
        )
        body = v.page.inner_text("body").replace("\u00a0", " ")
        assert p[0] + " base" in body and p[1] + " new" in body and p[2] + " stratum" in body
        v.assert_clean()
    finally:
        v.close()


def test_the_distraction_table_fits_a_1400_px_page(browser, tmp_path):
    """The demo's distraction table (five runs, eight measures, verdict, optimal k, hidden harm) fits a
    1400-px window: no wider than the page's column, so neither it nor the page scrolls sideways (it
    was 1588 px wide, with the rate and the harm shown twice)."""
    from ctxeval._demo import demo_report

    path = tmp_path / "report.html"
    demo_report(path)
    v = Visit(browser, path, width=1400)
    try:
        page = v.page
        width, column = page.eval_on_selector(
            "#distraction table.distraction", "t => [t.getBoundingClientRect().width, t.parentElement.clientWidth]"
        )
        assert 600 < width <= column <= 1400, (width, column)
        assert page.evaluate("document.documentElement.scrollWidth") <= 1400
        v.assert_clean()
    finally:
        v.close()
