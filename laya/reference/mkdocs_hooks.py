"""MkDocs hooks (mkdocs.yml `hooks:`): the pages generated at build time, so none of them can go stale.

- reference/params.md from the typed configs and dvc.yaml (laya.reference.params),
- reference/metrics.md from the headline keys and the detail records (laya.reference.metrics),
- changelog.md from CHANGELOG.md,
- the report's figures (reports/figures/) under results/figures/, where docs/results/report.md — written by the
  `report` stage with links that also work on a Git host (../../reports/figures/…) — finds them in the site.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
FIGURES = ROOT / "reports" / "figures"
REPORT_LINK, SITE_LINK = "](../../reports/figures/", "](figures/"


def on_files(files: Files, config) -> Files:
    from laya.reference.metrics import metrics_markdown
    from laya.reference.params import params_markdown, params_reference

    pages = {"reference/params.md": params_markdown(params_reference(ROOT / "dvc.yaml")),
             "reference/metrics.md": metrics_markdown(),
             "changelog.md": (ROOT / "CHANGELOG.md").read_text()}
    for uri, content in pages.items():
        files.append(File.generated(config, uri, content=content))
    for figure in sorted(FIGURES.rglob("*.png")):
        uri = f"results/figures/{figure.relative_to(FIGURES).as_posix()}"
        files.append(File.generated(config, uri, abs_src_path=str(figure)))
    return files


def on_page_markdown(markdown: str, page, config, files) -> str:
    if page.file.src_uri.startswith("results/"):
        return markdown.replace(REPORT_LINK, SITE_LINK)
    return markdown
