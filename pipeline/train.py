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

from laya.core.cli import parser, run
from laya.core.device import device_from_params
from laya.core.io import staged
from laya.core.parallel import workers_from_params
from laya.core.params import load_params
from laya.records.train import TrainRecord
from laya.settings import resolve
from laya.train.run import train_backbone, write_curves


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
    device = device_from_params(params)
    started = time.perf_counter()
    with staged(args.out, args.metrics, args.curves) as (out, metrics_path, curves):  # all three, or none
        results = train_backbone(settings, args.features, args.backbone, out, device,
                                 workers_from_params(params, device))
        record = TrainRecord.of(results)
        record.write(metrics_path)
        write_curves(results, curves)
    table = ", ".join(f"{h} {a.mean:.4f}±{a.std:.4f}" for h, a in record.accuracy.items())
    print(f"train@{args.name}: test accuracy {table}; wrote {args.out} in {time.perf_counter() - started:.0f}s")

if __name__ == "__main__":
    run(main)
