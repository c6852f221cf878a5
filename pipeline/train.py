"""Stage `train@<name>`: train every head × seed on a backbone's feature cache (no backbone in memory).

    python pipeline/train.py --name mlp --features data/features/mlp.zarr \
        --backbone data/backbones/mlp --out data/heads/mlp \
        --metrics reports/details/train_mlp.json --curves reports/curves/mlp

Reads params `backbones.<name>` (its protocol — joint: the heads of seed k train on joint model k's cache, and the
co-trained `laya_joint` heads are scored on their caches like the others —, its own heads and train keys),
`heads`, `train`, `device` and `workers` (head × seed runs side by side). Refuses a cache built
from other backbone weights or data than --backbone's card says.
Writes each head as safetensors + config.json (its card) under --out/<head>/seed<k>/.
"""

import time
from dataclasses import replace
from pathlib import Path

from laya.backbones import BackboneCard
from laya.core.cli import parser, run
from laya.core.device import device_from_params
from laya.core.io import staged
from laya.core.parallel import workers_from_params
from laya.core.params import load_params
from laya.heads import JOINT_HEAD
from laya.protocols import units
from laya.records.train import TrainRecord
from laya.settings import resolve
from laya.storage.store import FeatureStore
from laya.train import train_units, write_curves
from laya.train.joint import adopt_joint_head


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--name", required=True, help="backbone name, a key of params `backbones`")
    p.add_argument("--features", required=True, help="feature store (output of `extract@<name>`)")
    p.add_argument("--backbone", required=True, help="the frozen backbone's folder (its card: weights and data hash)")
    p.add_argument("--out", required=True, help="folder for the trained heads, e.g. data/heads/mlp")
    p.add_argument("--metrics", required=True, help="JSON of accuracies per head and seed to write")
    p.add_argument("--curves", required=True, help="folder for per-head training curves, every seed")
    args = p.parse_args()
    params = load_params(args.params)
    settings = resolve(params, args.name)
    heads, cfg, bb, key = settings.heads, settings.train, settings.backbone, settings.backbone_key
    device = device_from_params(params)
    workers = workers_from_params(params, device)
    started = time.perf_counter()
    with staged(args.out, args.metrics, args.curves) as (out, metrics_path, curves):  # all three, or none
        stores = []
        for unit in units(bb, key):
            store = FeatureStore.open(unit.path(args.features))
            store.check_built_from(BackboneCard.load(unit.path(args.backbone)))
            stores.append((store, unit.head_seeds(cfg.seeds)))
            print(f"train@{args.name}: {len(heads.names)} heads × {len(stores[-1][1])} seeds on {store.path} "
                  f"({len(store.layers)} layers {store.dims})")
        seeds = sorted({seed for _, unit_seeds in stores for seed in unit_seeds})
        runs = len(heads.names) * len(seeds)
        print(f"train@{args.name}: {runs} runs in {min(workers, runs)} worker(s)", flush=True)
        results = train_units(stores, heads, replace(cfg, seeds=seeds), out, device, workers)
        if bb.protocol == "joint":
            for unit, (store, _) in zip(units(bb, key), stores):
                seed, run = adopt_joint_head(unit.path(Path(args.backbone)), store, out, args.name)
                results.setdefault(JOINT_HEAD, {})[seed] = run
                print(f"  {JOINT_HEAD} seed {seed}: test acc {run['test_accuracy']:.4f} on the cache")
        record = TrainRecord.of(results)
        record.write(metrics_path)
        write_curves(results, curves)
    table = ", ".join(f"{h} {a.mean:.4f}±{a.std:.4f}" for h, a in record.accuracy.items())
    print(f"train@{args.name}: test accuracy {table}; wrote {args.out} in {time.perf_counter() - started:.0f}s")


if __name__ == "__main__":
    run(main)
