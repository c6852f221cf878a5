"""Stage `backbone@<name>`: train a backbone once with a linear classifier, then freeze it.

    python pipeline/backbone.py --name mlp --data data/prepared/fashion_mnist.zarr \
        --out data/backbones/mlp --metrics reports/details/backbone_mlp.json

Reads params `backbones.<name>` and `device`. Writes model.safetensors + config.json (the backbone card: the
params used, the training history, the weights' SHA-256 — nothing that varies from run to run, so a rebuild is
byte-identical) and the backbone's test accuracy as a DVC metric.
"""

import time

from laya.backbones import BackboneConfig, create_backbone, save_backbone
from laya.cli import parser, run
from laya.config import from_dict, load_params, section
from laya.data import PreparedData
from laya.device import device_from_params
from laya.io import staged, write_json


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--name", required=True, help="backbone name, a key of params `backbones`")
    p.add_argument("--data", required=True, help="prepared store (output of `prepare`)")
    p.add_argument("--out", required=True, help="folder for model.safetensors + config.json")
    p.add_argument("--metrics", required=True, help="JSON metrics file to write")
    args = p.parse_args()
    params = load_params(args.params)
    key = f"backbones.{args.name}"
    cfg = from_dict(BackboneConfig, section(params, key), key)
    started = time.perf_counter()
    model, card = create_backbone(args.name, cfg, PreparedData(args.data), device_from_params(params), key)
    with staged(args.out, args.metrics) as (out, metrics):
        save_backbone(out, model, card)
        write_json(metrics, {"test_accuracy": round(card.test_accuracy, 6),
                             "val_accuracy": round(card.val_accuracy, 6), "best_epoch": card.best_epoch,
                             "parameters": card.parameters})
    print(f"backbone@{args.name}: wrote {args.out} ({card.parameters:,} params) test accuracy "
          f"{card.test_accuracy:.4f} (best epoch {card.best_epoch}) in {time.perf_counter() - started:.0f}s")


if __name__ == "__main__":
    run(main)
