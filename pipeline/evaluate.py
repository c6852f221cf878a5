"""Stage `evaluate@<name>`: score every (method, head) pair of `evaluate.methods` against leave-one-layer-out on
the test split, write WIA-AI-009 explanations and figures. Reads the feature cache and the trained heads (and,
for the spatial maps, the frozen backbone and the prepared images).

    python pipeline/evaluate.py --name mlp --features data/features/mlp.zarr --heads data/heads/mlp \
        --metrics reports/details/evaluate_mlp.json --patterns reports/depth/mlp.json \
        --explanations reports/explanations/mlp.jsonl --figures reports/figures/mlp \
        --timings reports/timings/evaluate_mlp.json --backbone data/backbones/mlp \
        --data data/prepared/fashion_mnist.zarr

With --backbone and --data, the explained inputs of a backbone whose layers have spatial axes (CNN, ViT) also
get a map per layer from the backbone run live (laya.spatial; params evaluate.spatial).
Reads params `backbones.<name>.backbone` (protocol joint: seed k's heads are evaluated on joint model k's cache, and
`laya_joint` joins the heads explained), `evaluate`, `device` and `workers` (seeds side by side); evaluates the
seeds of evaluate.seeds that were trained. The cost of each method (ms per explanation) goes to --timings, which is
not a DVC output: wall-clock times differ from run to run, and every DVC output is reproducible bit for bit.
"""

import time
from pathlib import Path

from laya.backbones.config import entry
from laya.core.cli import parser, run
from laya.core.config import from_dict, section
from laya.core.device import device_from_params
from laya.core.io import write_json
from laya.core.parallel import workers_from_params
from laya.core.params import load_params
from laya.data import PreparedData
from laya.evaluate import EvaluateConfig
from laya.evaluate.run import LiveSources, evaluate_backbone, for_trained, trained_seeds, write_outcome
from laya.protocols import head_data, units
from laya.storage.store import FeatureStore


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--name", required=True, help="backbone name, a key of params `backbones`")
    p.add_argument("--features", required=True, help="feature store (output of `extract@<name>`)")
    p.add_argument("--heads", required=True, help="trained heads folder (output of `train@<name>`)")
    p.add_argument("--metrics", required=True, help="detail metrics JSON (the report derives the headline)")
    p.add_argument("--patterns", required=True, help="JSON of depth patterns (class × layer α, agreement, curves)")
    p.add_argument("--explanations", required=True, help="JSONL of WIA-AI-009 explanations to write")
    p.add_argument("--figures", required=True, help="folder for the PNG figures")
    p.add_argument("--timings", default=None, help="JSON of ms per explanation (a log, not a DVC output)")
    p.add_argument("--backbone", default=None, help="backbone folder (output of `backbone@<name>`): spatial maps")
    p.add_argument("--data", default=None, help="prepared dataset (output of `prepare`): the explained images")
    args = p.parse_args()
    params = load_params(args.params)
    cfg, dropped = for_trained(from_dict(EvaluateConfig, section(params, "evaluate"), "evaluate"), args.heads)
    if dropped:
        print(f"evaluate@{args.name}: heads {dropped} were not trained for {args.name}; their pairs are skipped")
    key = f"backbones.{args.name}.backbone"
    bb = entry(params, args.name).backbone
    started = time.perf_counter()
    stores = [(FeatureStore.open(unit.path(args.features)), trained_seeds(cfg, args.heads, unit.seeds))
              for unit in units(bb, key)]
    device = device_from_params(params)
    workers = workers_from_params(params, device)
    live = None
    if args.backbone and args.data:
        live = LiveSources(head_data(bb, PreparedData(args.data), key),
                           [Path(unit.path(args.backbone)) for unit in units(bb, key)])
    outcome = evaluate_backbone(args.name, stores, args.heads, cfg, device, workers, live)
    skipped = [s for s in cfg.seeds if s not in outcome.seeds]
    if skipped:
        print(f"evaluate@{args.name}: seeds {skipped} of evaluate.seeds were not trained for {args.name}; "
              f"evaluated {outcome.seeds}")
    write_outcome(outcome, args.name, cfg, args.metrics, args.patterns, args.explanations, args.figures)
    if args.timings:
        write_json(args.timings, outcome.timings)
    scores = outcome.scores
    line = ", ".join(f"{m}@{h} {scores.faithfulness[h][m]:.3f}/{scores.deletion_at_1[h][m]:.3f}"
                     for m, h in scores.pairs())
    print(f"evaluate@{args.name}: faithfulness/Deletion@1 (mean of {len(outcome.seeds)} seeds) {line}; "
          f"{len(outcome.payloads)} explanations; {time.perf_counter() - started:.0f}s")
    if scores.spatial is not None:
        print(f"evaluate@{args.name}: deleting the top {scores.spatial.fraction:.0%} cells drops p_c by "
              + ", ".join(f"{k} {v:.3f}" for k, v in scores.spatial.drop.items()))

if __name__ == "__main__":
    run(main)
