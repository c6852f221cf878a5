"""The documentation's results pages (docs/results/, written by the `report` stage): index.md leads with the
findings, report.md holds every table and figure. Figure links are relative to the pages' folder, so they work
on a Git host; the MkDocs hook maps them into the site (laya.reference.mkdocs_hooks)."""

from __future__ import annotations

from pathlib import Path

from laya.report.document import Block, to_markdown
from laya.report.findings import findings_markdown
from laya.report.inputs import ReportInputs

INDEX = """# Results

The numbers of the last `dvc repro` on {dataset}, written by the `report` stage from reports/details/ — a
`dvc exp run` that changes them rewrites this page. Every table and figure: [the full report](report.md); the same
as one self-contained page: `reports/index.html`.

## What you can trust α for

{findings}"""


def results_pages(inputs: ReportInputs, blocks: list[Block], folder: str | Path) -> dict[str, str]:
    """{file name: Markdown} of the results pages that live in `folder`."""
    return {"index.md": INDEX.format(dataset=inputs.dataset, findings=findings_markdown(inputs)),
            "report.md": to_markdown(blocks, Path(folder))}
