"""The pages a person opens — `dvc plots show` and reports/index.html — render in headless Chromium with the
network cut off (every request goes to a dead proxy), and are not blank."""

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
from PIL import Image

from conftest import REPO, needs

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = needs(CHROMIUM is not None, "chromium (`make setup` installs Debian's package)")


def screenshot(page: Path, out: Path, height: int = 2400) -> np.ndarray:
    """RGB pixels of `page` rendered offline (a dead proxy for every URL, JavaScript given 5 s of virtual time)."""
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--user-data-dir={out.parent / 'chromium-profile'}", "--proxy-server=127.0.0.1:9",
                    "--proxy-bypass-list=<-loopback>", f"--window-size=1400,{height}", "--virtual-time-budget=5000",
                    f"--screenshot={out}", page.as_uri()], check=True, capture_output=True, timeout=120)
    return np.asarray(Image.open(out).convert("RGB"))


def inked(pixels: np.ndarray) -> float:
    """Fraction of pixels that are not (near) white."""
    return float((pixels.min(axis=2) < 235).mean())


def colours(pixels: np.ndarray) -> int:
    """Distinct saturated colours (chart lines and bars; text is grey)."""
    saturated = pixels[(pixels.max(axis=2).astype(int) - pixels.min(axis=2)) > 60]
    return len(np.unique(saturated // 32, axis=0))


def _plots_page(tmp_path: Path, *template: str) -> Path:
    out = tmp_path / "plots"
    done = subprocess.run([sys.executable, "-m", "dvc", "plots", "show", "-o", str(out), *template], cwd=REPO,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return out / "index.html"


def test_the_dvc_plots_page_draws_its_charts_offline(tmp_path):
    page = _plots_page(tmp_path)
    html = page.read_text()
    assert "cdn.jsdelivr" not in html and html.count("vegaEmbed(") >= 10  # curves, bars ×2, frontier
    pixels = screenshot(page, tmp_path / "plots.png")
    assert inked(pixels) > 0.05 and colours(pixels) >= 4, (inked(pixels), colours(pixels))
    # the control: a page that loads Vega from the CDN, as DVC's own template does, stays blank offline
    cdn = tmp_path / "cdn-template.html"
    cdn.write_text("<html><head>{scripts}</head><body>{plot_divs}</body></html>")
    blank = screenshot(_plots_page(tmp_path, "--html-template", str(cdn)), tmp_path / "cdn.png")
    assert inked(blank) < 0.001, inked(blank)


def test_the_html_report_is_one_file_with_its_figures_and_renders_offline(tmp_path, prepared_path):
    out, prepared = tmp_path / "reports", prepared_path
    done = subprocess.run(
        [sys.executable, "pipeline/report.py", "--params", "params.yaml", "--details", "reports/details",
         "--data", str(prepared), "--curves", "reports/curves", "--figures", "reports/figures",
         "--metrics", str(out / "metrics"), "--plots", str(out / "plots"), "--results", str(out / "results"),
         "--html", str(out / "index.html")], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    html = (out / "index.html").read_text()
    figures = sorted(REPO.glob("reports/figures/**/*.png"))
    assert html.count('src="data:image/png;base64,') == len(figures) > 0
    assert "http://" not in html and "https://" not in html  # nothing to fetch
    pixels = screenshot(out / "index.html", tmp_path / "index.png", height=16000)  # the figures follow the tables
    assert inked(pixels) > 0.05 and colours(pixels) >= 4, (inked(pixels), colours(pixels))
