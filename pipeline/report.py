"""Stage `report`: everything a person reads, derived from the stages' detail files.

    python pipeline/report.py --details reports/details \
        --curves reports/curves --figures reports/figures --metrics reports/metrics --plots reports/plots \
        --markdown reports/report.md --html reports/index.html

Writes the headline metrics (--metrics/<backbone>.json and clt.json: what `dvc exp show` shows), the data behind
dvc.yaml's top-level plots (--plots), the tables as Markdown and as one self-contained HTML page with every
figure inline. Reads params `data.name` (headings), `backbones` (which, in which order), `heads.names` and
`evaluate.methods` (row order). All outputs are replaced together or not at all.
"""

from pathlib import Path

from laya.backbones.config import entry
from laya.core.cli import parser, run
from laya.core.config import section
from laya.core.io import staged, write_json
from laya.core.params import load_params
from laya.data import dataset_title
from laya.report import (
    ReportInputs,
    backbone_headline,
    clt_headline,
    report_blocks,
    to_html,
    to_markdown,
    write_plot_data,
)


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--details", required=True, help="folder of the stages' detail JSON files")
    p.add_argument("--curves", required=True, help="folder of the train stages' curves (<backbone>/<head>.csv)")
    p.add_argument("--figures", required=True, help="folder of the evaluate and clt stages' figures")
    p.add_argument("--metrics", required=True, help="folder for the headline metrics (DVC metrics)")
    p.add_argument("--plots", required=True, help="folder for the plot data (dvc.yaml's top-level plots)")
    p.add_argument("--markdown", required=True, help="Markdown report to write")
    p.add_argument("--html", required=True, help="self-contained HTML report to write")
    args = p.parse_args()
    params = load_params(args.params)
    methods = section(params, "evaluate").get("methods") or {}  # validated by the check stage; order only
    inputs = ReportInputs(dataset_title(section(params, "data").get("name", "fashion_mnist")),
                          list(section(params, "backbones")),
                          Path(args.details), Path(args.curves), Path(args.figures),
                          list(section(params, "heads").get("names") or []),
                          [(method, head) for method, heads in methods.items() for head in heads],
                          {name: entry(params, name).backbone for name in section(params, "backbones")})
    blocks = report_blocks(inputs)
    with staged(args.metrics, args.plots, args.markdown, args.html) as (metrics, plots, markdown, page):
        metrics.mkdir(parents=True)
        for name in inputs.backbones:
            write_json(metrics / f"{name}.json", backbone_headline(inputs, name))
        if (clt := clt_headline(inputs)) is not None:
            write_json(metrics / "clt.json", clt)
        plots.mkdir(parents=True)
        charts = write_plot_data(inputs, plots)
        markdown.write_text(to_markdown(blocks, Path(args.markdown).parent))
        page.write_text(to_html(blocks, f"laya report — {inputs.dataset}"))
    print(f"report: wrote {args.markdown}, {args.html}, {args.metrics}/ ({len(inputs.backbones)} backbones) and "
          f"{len(charts)} plot data files")


if __name__ == "__main__":
    run(main)
