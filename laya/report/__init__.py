"""Stage `report`'s outputs, all derived from the stages' detail files (reports/details/): the headline
metrics `dvc exp show` shows, the data behind dvc.yaml's plots, reports/report.md and reports/index.html."""

from laya.report.document import Figure, Heading, Table, to_html, to_markdown
from laya.report.headline import backbone_headline, clt_headline
from laya.report.inputs import ReportInputs
from laya.report.page import report_blocks
from laya.report.plot_data import write_plot_data

__all__ = ["Figure", "Heading", "ReportInputs", "Table", "backbone_headline", "clt_headline", "report_blocks",
           "to_html", "to_markdown", "write_plot_data"]
