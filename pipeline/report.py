"""Stage `report`: render reports/report.md (tables) from every stage's metrics JSON.

    python pipeline/report.py --data data/prepared/fashion_mnist.zarr \
        --backbone-metrics mlp=reports/metrics/backbone_mlp.json … --train-metrics mlp=reports/metrics/mlp.json … \
        --evaluate-metrics mlp=reports/metrics/evaluate_mlp.json … --clt-metrics reports/metrics/clt.json \
        --frontier-metrics reports/metrics/clt_frontier.json --out reports/report.md

Every input file is named on the command line (`<backbone>=<path>`, columns in that order); the dataset's name
comes from the prepared store. Reads params `heads.names` and `evaluate.methods` (row order).
"""

from pathlib import Path

from laya.cli import parser, run
from laya.config import ConfigError, load_params, section
from laya.data import PreparedData, dataset_title
from laya.io import atomic_path
from laya.report import ReportInputs, render


def named_paths(values: list[str], flag: str) -> dict[str, Path]:
    """['mlp=a.json', …] → {'mlp': Path('a.json'), …}."""
    pairs = [v.split("=", 1) for v in values]
    bad = [v for v, pair in zip(values, pairs) if len(pair) != 2 or not all(pair)]
    if bad:
        raise ConfigError(f"{flag}: expected <backbone>=<path>, got {bad}; e.g. {flag} mlp=reports/metrics/mlp.json.")
    return {name: Path(path) for name, path in pairs}


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--data", required=True, help="prepared store (its dataset name heads the tables)")
    p.add_argument("--backbone-metrics", nargs="+", required=True, help="<backbone>=<backbone@ metrics JSON>")
    p.add_argument("--train-metrics", nargs="+", required=True, help="<backbone>=<train@ metrics JSON>")
    p.add_argument("--evaluate-metrics", nargs="*", default=[], help="<backbone>=<evaluate@ metrics JSON>")
    p.add_argument("--clt-metrics", default=None, help="the clt stage's metrics JSON")
    p.add_argument("--frontier-metrics", default=None, help="the clt_frontier stage's metrics JSON")
    p.add_argument("--out", default="reports/report.md", help="Markdown report to write")
    args = p.parse_args()
    params = load_params(args.params)
    methods = section(params, "evaluate").get("methods") or {}  # validated by the evaluate stages; order only
    inputs = ReportInputs(dataset_title(PreparedData(args.data).attrs["dataset"]),
                          named_paths(args.backbone_metrics, "--backbone-metrics"),
                          named_paths(args.train_metrics, "--train-metrics"),
                          named_paths(args.evaluate_metrics, "--evaluate-metrics"),
                          Path(args.clt_metrics) if args.clt_metrics else None,
                          Path(args.frontier_metrics) if args.frontier_metrics else None)
    pairs = [(method, head) for method, heads in methods.items() for head in heads]
    text = render(inputs, section(params, "heads").get("names"), pairs)
    with atomic_path(args.out) as tmp:
        tmp.write_text(text)
    print(f"report: wrote {args.out} ({len(inputs.backbones)} backbones)")


if __name__ == "__main__":
    run(main)
