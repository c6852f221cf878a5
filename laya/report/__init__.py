"""Stage `report`'s outputs, all derived from the stages' detail files (reports/details/): the headline
metrics `dvc metrics show` shows, the data behind dvc.yaml's plots, the results pages of the documentation
(docs/results/), the README's findings and reports/index.html."""

from laya.report.document import Figure, Heading, Table, to_html, to_markdown
from laya.report.findings import findings_markdown, replace_findings
from laya.report.headline import backbone_headline, clt_headline
from laya.report.inputs import ReportInputs
from laya.report.page import report_blocks
from laya.report.plot_data import write_plot_data
from laya.report.results import results_pages

__all__ = ["Figure", "Heading", "ReportInputs", "Table", "backbone_headline", "clt_headline", "findings_markdown",
           "replace_findings", "report_blocks", "results_pages", "to_html", "to_markdown", "write_plot_data"]
