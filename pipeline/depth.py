"""Stage `depth@<name>`: α put to work on depth — layer pruning ranked by α and early exit guided by α, each
beside its baselines (rankings by ScalarMix weight, mean LOO effect and random orders; exit on the maximum
softmax probability), with the frozen backbone's FLOPs counted by torch.

    python pipeline/depth.py --name mlp --features data/features/mlp.zarr --heads data/heads/mlp \
        --backbone data/backbones/mlp --metrics reports/details/depth_mlp.json --figures reports/figures/depth_mlp

Reads params `backbones.<name>` (`depth: false` writes only a record that the stage did not run; its heads and
train keys), `depth` (which head ranks the layers, the retrained heads' recipe, the exit sweep), `heads` (the
head's hyper-parameters), `train` (the recipe the retrained heads shorten) and `workers` (the retrained heads side
by side). Heads retrain on the CPU, one torch thread each, so the outputs
are the same bits for any worker count.
"""

import time

from laya.backbones import BackboneCard
from laya.core.cli import parser, run
from laya.core.config import from_dict, section
from laya.core.io import staged
from laya.core.parallel import workers_from_params
from laya.core.params import load_params
from laya.core.record import NotRun
from laya.depth import DepthConfig
from laya.depth.figures import early_exit_figure, pruning_figure
from laya.depth.run import backbone_flops, depth_uses
from laya.settings import resolve
from laya.storage.store import FeatureStore


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--name", required=True, help="backbone name, a key of params `backbones`")
    p.add_argument("--features", required=True, help="feature store (output of `extract@<name>`)")
    p.add_argument("--heads", required=True, help="trained heads folder (output of `train@<name>`)")
    p.add_argument("--backbone", required=True, help="the frozen backbone's folder (its FLOPs are counted)")
    p.add_argument("--metrics", required=True, help="detail JSON to write (the report derives the headline)")
    p.add_argument("--figures", required=True, help="folder for the PNG figures")
    args = p.parse_args()
    params = load_params(args.params)
    settings = resolve(params, args.name)
    if not settings.entry.depth:
        why = f"{settings.key}.depth is false"
        with staged(args.metrics, args.figures) as (metrics_path, figures):
            NotRun(not_run=why).write(metrics_path)
            figures.mkdir(parents=True)
        print(f"depth@{args.name}: not run ({why})")
        return
    cfg = from_dict(DepthConfig, section(params, "depth"), "depth")
    heads, train = settings.heads, settings.train
    cfg.check_trained(heads.names, train.seeds, args.name)
    started = time.perf_counter()
    store = FeatureStore.open(args.features)
    store.check_built_from(BackboneCard.load(args.backbone))
    flops = backbone_flops(args.backbone, store.layers)
    record = depth_uses(args.name, store, args.heads, flops, cfg, heads, train, workers_from_params(params))
    with staged(args.metrics, args.figures) as (metrics_path, figures):
        record.write(metrics_path)
        figures.mkdir(parents=True)
        pruning_figure(record.pruning.curves, f"{args.name}: layers pruned by each ranking, {cfg.head} retrained",
                       figures / "pruning.png")
        early_exit_figure(record.early_exit.rules, record.early_exit.full_accuracy,
                          f"{args.name}: early exit over prefix heads", figures / "early_exit.png")
    exits = ", ".join(f"{rule} {r.area:.4f}" for rule, r in record.early_exit.rules.items())
    pruned = ", ".join(f"{name} {s.accuracy_one_removed}" for name, s in record.pruning.summary.items())
    print(f"depth@{args.name}: accuracy with one layer pruned: {pruned}; early-exit areas: {exits}; "
          f"{time.perf_counter() - started:.0f}s")


if __name__ == "__main__":
    run(main)
