"""The documentation site: ``mkdocs build --strict`` passes (every page in the nav, every link and
cross-reference resolved, every public name's docstring rendered), the built pages stay offline (no
web font, no script, style or image from anywhere but the site), and every public name has its entry
in the API reference."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import ctxeval

ROOT = Path(__file__).resolve().parents[2]
API = ROOT / "docs" / "reference" / "api"

pytestmark = pytest.mark.slow  # the build takes ~10 s on a busy 2-core machine


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": str(Path(sys.executable).parent), "HOME": str(out)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def test_the_site_builds_strict_and_loads_nothing_from_elsewhere(site: Path) -> None:
    pages = sorted(site.rglob("*.html"))
    assert len(pages) >= 15
    for page in pages:
        html = page.read_text(encoding="utf-8")
        # what a browser would fetch on its own: scripts, styles, fonts, images, frames
        fetched = re.findall(r'<(?:script|img|iframe|source)[^>]*\ssrc="([^"]+)"', html)
        fetched += re.findall(r'<link[^>]*\shref="([^"]+)"', html)
        remote = [u for u in fetched if re.match(r"(https?:)?//", u)]
        assert not remote, (page.name, remote)
        assert "fonts.googleapis" not in html and "fonts.gstatic" not in html, page.name


def test_every_public_name_has_an_api_entry_and_its_docstring(site: Path) -> None:
    entries = re.findall(r"^::: ctxeval\.(\S+)$", "".join(p.read_text() for p in API.glob("*.md")), re.M)
    assert len(entries) == len(set(entries)), "a name has two entries"
    assert set(entries) == set(ctxeval.__all__) - {"__version__"}
    for page in API.glob("*.md"):
        html = (site / "reference" / "api" / f"{page.stem}.html").read_text(encoding="utf-8")
        for name in re.findall(r"^::: ctxeval\.(\S+)$", page.read_text(), re.M):
            assert f'id="ctxeval.{name}"' in html, name
            # the docstring's first words are on the page (compared as letters and digits only)
            first = re.sub(r"~?ctxeval\.|:[a-z]+:", "", (getattr(ctxeval, name).__doc__ or "").strip())
            words = _plain(first)[:30]
            assert words and words in _plain(re.sub(r"<[^>]+>", " ", html)), name


def _plain(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "", text.replace("&#39;", "'").replace("&quot;", '"').replace("&amp;", "&"))


#: the pages the screenshots show: the home page, a guide and an API page
SHOWN = ["index.html", "guides/rag.html", "reference/api/verbs.html"]


def test_the_pages_read_in_a_browser(site: Path, tmp_path: Path) -> None:
    """Headless Chromium (as tests/render/test_html_browser.py drives it) opens the home page, a guide
    and an API page: nothing is fetched from outside the site, nothing fails or logs an error, the page
    does not scroll sideways, and no command or JSON sample hides its end behind a scroll bar. The
    screenshots are left in the test's folder (printed) for a person to look at."""
    import os

    if os.environ.get("CTXEVAL_SKIP_BROWSER") == "1":
        pytest.skip("browser tests skipped: CTXEVAL_SKIP_BROWSER=1")
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(ROOT / "tests" / "render"))
    from test_html_browser import ARGS, CHROMIUM

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            for name in SHOWN:
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                problems: list[str] = []
                page.on("console", lambda m, p=problems: p.append(m.text) if m.type == "error" else None)
                page.on("pageerror", lambda e, p=problems: p.append(str(e)))
                page.on("requestfailed", lambda r, p=problems: p.append(f"failed: {r.url}"))
                outside: list[str] = []
                page.route(
                    "**/*",
                    lambda route, o=outside: (
                        route.continue_()
                        if route.request.url.startswith("file://")
                        else (o.append(route.request.url), route.abort())
                    ),
                )
                page.goto((site / name).as_uri())
                page.wait_for_load_state("load")
                assert not outside and not problems, (name, outside, problems)
                assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), name
                hidden = page.evaluate(
                    """[...document.querySelectorAll('.language-bash pre > code, .language-sh pre > code, .language-json pre > code')]
                       .filter(p => p.scrollWidth > p.clientWidth + 1).map(p => p.innerText.slice(0, 60))"""
                )
                assert not hidden, (name, hidden)
                shot = tmp_path / (name.replace("/", "-").removesuffix(".html") + ".png")
                page.screenshot(path=str(shot), full_page=True)
                print(f"screenshot: {shot}")
                page.close()
        finally:
            browser.close()
