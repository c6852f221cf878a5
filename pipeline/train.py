"""Stage `train@<name>`: train every head × seed on a backbone's feature cache (no backbone in memory).

    python pipeline/train.py --name mlp --features data/features/mlp.zarr \
        --backbone-config data/backbones/mlp/config.json --out data/heads/mlp \
        --metrics reports/metrics/mlp.json --curves reports/curves/mlp

Reads params `heads`, `train` (with `train.overrides.<name>` applied) and `device`. Refuses a cache built
from other backbone weights than --backbone-config's.
Writes each head as safetensors + config.json under --out/<head>/seed<k>/.
"""

import time

from laya.cli import parser, run
from laya.config import ConfigError, from_dict, load_params, section
from laya.device import resolve_device
from laya.io import read_json, write_json
from laya.store import FeatureStore
from laya.train import HeadsConfig, TrainConfig, summarise, train_heads, write_curves


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--name", required=True, help="backbone name, a key of params `backbones`")
    p.add_argument("--features", required=True, help="feature store (output of `extract@<name>`)")
    p.add_argument("--backbone-config", required=True, help="the frozen backbone's config.json (weights hash)")
    p.add_argument("--out", required=True, help="folder for the trained heads, e.g. data/heads/mlp")
    p.add_argument("--metrics", required=True, help="DVC metrics JSON to write")
    p.add_argument("--curves", required=True, help="folder for per-head training curves (DVC plots)")
    args = p.parse_args()
    params = load_params(args.params)
    heads = from_dict(HeadsConfig, section(params, "heads"), "heads")
    cfg = from_dict(TrainConfig, section(params, "train"), "train")
    backbones = sorted(params.get("backbones") or {})
    unknown = sorted(set(cfg.overrides) - set(backbones))
    if unknown:
        raise ConfigError(f"train.overrides: {unknown} not in params `backbones` {backbones}; rename or remove them.")
    cfg = cfg.for_backbone(args.name)
    store = FeatureStore.open(args.features)
    backbone = read_json(args.backbone_config, "backbone config")
    store.check_fingerprint(backbone_sha256=backbone["weights_sha256"], data_sha256=backbone["data_sha256"])
    started = time.perf_counter()
    print(f"train@{args.name}: {len(heads.names)} heads × {len(cfg.seeds)} seeds on {store.path} "
          f"({len(store.layers)} layers {store.dims})")
    results = train_heads(store, heads, cfg, args.out, resolve_device(params.get("device", "auto")))
    metrics = summarise(results)
    write_json(args.metrics, metrics)
    write_curves(results, args.curves)
    table = ", ".join(f"{h} {m['mean']:.4f}±{m['std']:.4f}" for h, m in metrics["accuracy"].items())
    print(f"train@{args.name}: test accuracy {table}; wrote {args.out} in {time.perf_counter() - started:.0f}s")


if __name__ == "__main__":
    run(main)
