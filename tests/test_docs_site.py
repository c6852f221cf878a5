"""`make docs` builds the site with `mkdocs build --strict` (no broken link, no missing reference), and its pages —
with reports/index.html — render in headless Chromium with every request off the machine refused: not blank, no
console error, no sideways scroll of the page at 1,280 px (wide tables scroll inside their own box)."""

import functools
import http.server
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import REPO, needs

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = needs(CHROMIUM is not None, "chromium (`make setup` installs Debian's package)")
PAGES = ["index.html", "guide/pipeline/index.html", "reference/params/index.html", "results/index.html",
         "results/report/index.html"]
WIDTH = 1280


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    built = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)], cwd=REPO,
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-4000:]
    return out


@pytest.fixture(scope="module")
def server(site):
    """The site (and reports/index.html beside it) over HTTP on loopback, as `mkdocs serve` would give it."""
    shutil.copy2(REPO / "reports" / "index.html", site / "report-page.html")
    handler = functools.partial(_Quiet, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _look(url: str, base: str) -> dict:
    """Open `url` at WIDTH px with only `base` reachable: console errors, the page's text and its scroll widths."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu",
                                                                     "--disable-background-networking"])
        page = browser.new_page(viewport={"width": WIDTH, "height": 900})
        errors = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(base) else route.abort())
        page.goto(url, wait_until="networkidle")
        seen = page.evaluate("""() => ({text: document.body.innerText.length,
            scroll: document.documentElement.scrollWidth, width: document.documentElement.clientWidth,
            tables: document.querySelectorAll('table').length,
            toc: document.querySelectorAll('nav a[href^="#"], .md-nav--secondary a').length})""")
        browser.close()
    return {**seen, "errors": errors}


def test_the_site_builds_with_the_generated_pages(site):
    params = (site / "reference" / "params" / "index.html").read_text()
    assert "data.val_fraction" in params and "clt_frontier.baselines" in params
    assert "faith.alpha" in (site / "reference" / "metrics" / "index.html").read_text()
    assert "FeatureStore" in (site / "reference" / "api" / "index.html").read_text()
    page = site / "results" / "report" / "index.html"
    sources = re.findall(r'<img [^>]*src="([^"]+\.png)"', page.read_text())
    assert len(sources) == len(list((REPO / "reports" / "figures").rglob("*.png"))) > 0
    assert [s for s in sources if not (page.parent / s).resolve().is_file()] == []  # every figure is in the site


@pytest.mark.parametrize("page", PAGES + ["report-page.html"])
def test_a_page_renders_offline_without_errors_or_sideways_scroll(server, page):
    seen = _look(f"{server}/{page}", server)
    assert seen["errors"] == [], seen["errors"]
    assert seen["text"] > 500, seen  # not blank
    assert seen["scroll"] <= seen["width"], seen  # the page never scrolls sideways
    if page == "report-page.html":
        assert seen["toc"] >= 5 and seen["tables"] >= 10  # a table of contents, then the sections
