"""Stage `report`: everything a person reads, derived from the stages' detail files.

    python pipeline/report.py --details reports/details --data data/prepared/fashion_mnist.zarr \
        --curves reports/curves --figures reports/figures --metrics reports/metrics --plots reports/plots \
        --results docs/results --html reports/index.html --readme README.md

Writes the headline metrics (--metrics/<backbone>.json and clt.json: what `dvc metrics show` shows), the data
behind dvc.yaml's top-level plots (--plots), the documentation's results pages (--results: index.md, the findings;
report.md, every table and figure), one self-contained HTML page with every figure inline, and the findings into
the README between its two findings markers. Reads params `data.name` (headings), `backbones` (which, in which
order), `heads.names` and `evaluate.methods` (row order), and the prepared data's class count (chance levels).
The DVC outputs are replaced together or not at all.
"""

from pathlib import Path

from laya.core.cli import parser, run
from laya.core.io import atomic_path, staged, write_json
from laya.core.params import load_params
from laya.data import PreparedData
from laya.report import (
    ReportInputs,
    backbone_headline,
    clt_headline,
    findings_markdown,
    replace_findings,
    report_blocks,
    results_pages,
    to_html,
    write_plot_data,
)


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--details", required=True, help="folder of the stages' detail JSON files")
    p.add_argument("--data", required=True, help="the prepared dataset (its class count gives the chance levels)")
    p.add_argument("--curves", required=True, help="folder of the train stages' curves (<backbone>/<head>.csv)")
    p.add_argument("--figures", required=True, help="folder of the evaluate and clt stages' figures")
    p.add_argument("--metrics", required=True, help="folder for the headline metrics (DVC metrics)")
    p.add_argument("--plots", required=True, help="folder for the plot data (dvc.yaml's top-level plots)")
    p.add_argument("--results", required=True, help="folder for the documentation's results pages")
    p.add_argument("--html", required=True, help="self-contained HTML report to write")
    p.add_argument("--readme", help="a README whose findings block is rewritten (absent: none)")
    args = p.parse_args()
    params = load_params(args.params)  # validated by the check stage
    inputs = ReportInputs.from_params(params, args.details, args.curves, args.figures,
                                      classes=len(PreparedData(args.data).classes))
    blocks = report_blocks(inputs)
    readme = Path(args.readme) if args.readme else None
    readme_text = (replace_findings(readme.read_text(), findings_markdown(inputs), str(readme))  # fails first
                   if readme else None)
    with staged(args.metrics, args.plots, args.results, args.html) as (metrics, plots, results, page):
        metrics.mkdir(parents=True)
        for name in inputs.backbones:
            write_json(metrics / f"{name}.json", backbone_headline(inputs, name))
        if (clt := clt_headline(inputs)) is not None:
            write_json(metrics / "clt.json", clt)
        plots.mkdir(parents=True)
        charts = write_plot_data(inputs, plots)
        results.mkdir(parents=True)
        for name, text in results_pages(inputs, blocks, args.results).items():
            (results / name).write_text(text)
        page.write_text(to_html(blocks, f"laya report — {inputs.dataset}"))
    if readme is not None and readme_text != readme.read_text():
        with atomic_path(readme) as tmp:
            tmp.write_text(readme_text)
    print(f"report: wrote {args.results}/, {args.html}, {args.metrics}/ ({len(inputs.backbones)} backbones), "
          f"{len(charts)} plot data files" + (f" and the findings in {readme}" if readme else ""))


if __name__ == "__main__":
    run(main)
