"""Stage `backbone@<name>`: train the backbone(s) of one `backbones` entry under its protocol, then freeze them.

    python pipeline/backbone.py --name mlp --data data/prepared/fashion_mnist.zarr \
        --out data/backbones/mlp --metrics reports/details/backbone_mlp.json

Reads params `backbones.<name>.backbone`, `device` and `workers` (joint models side by side). Protocol frozen: the
backbone with a linear classifier; transfer: the same on `pretrain_classes` only; joint: per seed, backbone +
LAYA head end to end (laya.protocols).
Writes model.safetensors + config.json (the backbone card: the params used, the training history, the weights'
SHA-256 — nothing that varies from run to run, so a rebuild is byte-identical) per backbone, the joint heads
beside them, and the test accuracy (the joint model's, for joint) as details.
"""

import time

from laya.backbones.config import entry
from laya.core.cli import parser, run
from laya.core.device import device_from_params
from laya.core.io import staged
from laya.core.parallel import workers_from_params
from laya.core.params import load_params
from laya.data import PreparedData
from laya.protocols.create import create_protocol


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--name", required=True, help="backbone name, a key of params `backbones`")
    p.add_argument("--data", required=True, help="prepared store (output of `prepare`)")
    p.add_argument("--out", required=True, help="folder for model.safetensors + config.json")
    p.add_argument("--metrics", required=True, help="JSON metrics file to write")
    args = p.parse_args()
    params = load_params(args.params)
    key = f"backbones.{args.name}.backbone"
    cfg = entry(params, args.name).backbone
    started = time.perf_counter()
    data = PreparedData(args.data)
    with staged(args.out, args.metrics) as (out, metrics):
        device = device_from_params(params)
        record = create_protocol(args.name, cfg, data, out, device, key, workers_from_params(params, device))
        record.write(metrics)
    runs = record.seeds or {"test": record}
    accuracies = ", ".join(f"{unit} {r.test_accuracy:.4f} (best epoch {r.best_epoch})" for unit, r in runs.items())
    print(f"backbone@{args.name} ({cfg.protocol}): wrote {args.out} ({record.parameters:,} params) "
          f"accuracy {accuracies} in {time.perf_counter() - started:.0f}s")


if __name__ == "__main__":
    run(main)
