"""Stage `report`: render reports/report.md (tables) from every stage's metrics JSON.

    python pipeline/report.py --metrics-dir reports/metrics --out reports/report.md

Reads params `backbones` (which backbones to tabulate, in order) and `heads.names`, `evaluate.methods` (row order).
"""

from laya.cli import parser, run
from laya.config import load_params, section
from laya.io import atomic_path
from laya.report import render


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--metrics-dir", default="reports/metrics", help="folder of the stages' metrics JSON")
    p.add_argument("--out", default="reports/report.md", help="Markdown report to write")
    args = p.parse_args()
    params = load_params(args.params)
    backbones = list(section(params, "backbones"))
    text = render(args.metrics_dir, backbones, section(params, "heads").get("names"),
                  section(params, "evaluate").get("methods"))
    with atomic_path(args.out) as tmp:
        tmp.write_text(text)
    print(f"report: wrote {args.out} ({len(backbones)} backbones)")


if __name__ == "__main__":
    run(main)
