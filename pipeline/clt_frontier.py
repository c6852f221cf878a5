"""Stage `clt_frontier`: reconstruction vs sparsity — test R² against mean L0 for every TopK variant × k and
JumpReLU × λ, CLS and patch tokens, plus the ViT's test accuracy with its CLS MLP outputs replaced by each CLT.

    python pipeline/clt_frontier.py --features data/features/vit.zarr --backbone data/backbones/vit \
        --data data/prepared/fashion_mnist.zarr --metrics reports/details/clt_frontier.json \
        --table reports/clt/frontier.csv --figure reports/figures/clt_frontier.png

Reads params `clt_frontier` and the shared settings of `clt` (tokens, dict_size, lr, batch size, seed, …).
"""

import time

import pandas as pd

from laya import plots
from laya.cli import parser, run
from laya.clt import CLTConfig, FrontierConfig, load_tokens
from laya.clt.replace import Replacement
from laya.clt.run import ViTCache, frontier_configs, reconstruction, replaced_accuracy, test_tokens, train_clt
from laya.config import from_dict, load_params, section
from laya.device import device_from_params
from laya.io import staged, write_json


def label(point: dict) -> str:
    return f"{point['activation']}_k{point['k']}" if point["k"] is not None else f"jumprelu_l{point['sparsity']:g}"


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--features", required=True, help="the ViT's feature store, built with extract.mlp_io: true")
    p.add_argument("--backbone", required=True, help="the frozen ViT's folder")
    p.add_argument("--data", required=True, help="prepared dataset (test images)")
    p.add_argument("--metrics", required=True, help="detail metrics JSON (the report derives the headline)")
    p.add_argument("--table", required=True, help="CSV of the sweep")
    p.add_argument("--figure", required=True, help="PNG of R² vs L0")
    args = p.parse_args()
    params = load_params(args.params)
    base = from_dict(CLTConfig, section(params, "clt"), "clt")
    sweep = from_dict(FrontierConfig, section(params, "clt_frontier"), "clt_frontier")
    device = device_from_params(params)
    cache = ViTCache.open(args.features, args.backbone, args.data)
    store = cache.store
    started = time.perf_counter()
    train = load_tokens(store, "train", base.tokens, sweep.max_images)
    tests = test_tokens(store)
    configs = frontier_configs(base, sweep.activations, sweep.ks, sweep.sparsities, sweep.epochs, sweep.max_images)
    print(f"clt_frontier: {len(configs)} CLTs, {len(train)} {base.tokens} training tokens, {sweep.epochs} epochs each")
    points = []
    for cfg in configs:
        model, _ = train_clt(store, cfg, train, device, desc=f"{cfg.activation} k={cfg.k} λ={cfg.sparsity:g}")
        scores = reconstruction(model, tests, device)
        point = {"activation": cfg.activation, "k": cfg.k if cfg.activation != "jumprelu" else None,
                 "sparsity": cfg.sparsity if cfg.activation == "jumprelu" else None}
        for kind, m in scores.items():
            point.update({f"{kind}_{name}": round(m[name], 6) for name in ("r2", "cosine", "l0", "dead_fraction")})
        point["cls_replaced_accuracy"] = replaced_accuracy(cache, device, model, Replacement("cls"))
        points.append(point)
        print(f"  {label(point):18s} CLS R² {point['cls_r2']:.4f} L0 {point['cls_l0']:5.1f} | patch R² "
              f"{point['patch_r2']:.4f} L0 {point['patch_l0']:5.1f} | CLS-replaced accuracy "
              f"{point['cls_replaced_accuracy']:.4f}", flush=True)
    original = replaced_accuracy(cache, device)
    with staged(args.metrics, args.table, args.figure) as (metrics, table, figure):
        write_json(metrics, {"original_accuracy": original, **{label(p): {k: v for k, v in p.items()
                                                                        if k not in ("activation", "k", "sparsity")}
                                                              for p in points}})
        pd.DataFrame(points).to_csv(table, index=False)
        plots.clt_frontier(points, f"CLT reconstruction vs sparsity ({base.tokens} training tokens, "
                           f"{base.dict_size} features/layer, {sweep.epochs} epochs)", figure)
    print(f"clt_frontier: wrote {args.metrics}, {args.table}, {args.figure} in {time.perf_counter() - started:.0f}s")


if __name__ == "__main__":
    run(main)
