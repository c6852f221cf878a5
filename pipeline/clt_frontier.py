"""Stage `clt_frontier`: reconstruction vs sparsity — test R² against mean L0 for every TopK variant × k and
JumpReLU × λ, CLS and patch tokens, plus the ViT's test accuracy with its CLS MLP outputs replaced by each CLT —
and the same for the per-layer baselines (clt_frontier.baselines): a transcoder per block (the CLT decoder's
diagonal) and an SAE per block on the MLP outputs, at the same dictionary size and on the same k / λ grid.

    python pipeline/clt_frontier.py --features data/features/vit.zarr --backbone data/backbones/vit \
        --data data/prepared/fashion_mnist.zarr --metrics reports/details/clt_frontier.json \
        --table reports/clt/frontier.csv --figure reports/figures/clt_frontier.png

Reads params `clt_frontier`, the shared settings of `clt` (tokens, dict_size, lr, batch size, seed, …), `device`
and `workers` (sweep points side by side).
"""

import time

import pandas as pd

from laya.clt import CLTConfig, FrontierConfig
from laya.clt.config import frontier_configs
from laya.clt.frontier import FrontierPoint, fit_point, label, release, sweep_point
from laya.clt.run import ViTCache, replaced_accuracy
from laya.core import plots
from laya.core.cli import parser, run
from laya.core.config import from_dict, section
from laya.core.device import device_from_params
from laya.core.io import staged
from laya.core.parallel import run_jobs, workers_from_params
from laya.core.params import load_params
from laya.records.clt import FrontierRecord


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
    started = time.perf_counter()
    configs = frontier_configs(base, sweep.activations, sweep.ks, sweep.sparsities, sweep.epochs, sweep.max_images,
                               sweep.baselines)
    workers = workers_from_params(params, device)
    print(f"clt_frontier: {len(configs)} transcoders and SAEs on {base.tokens} tokens of "
          f"{sweep.max_images or 'all'} training images, {sweep.epochs} epochs each, in "
          f"{min(workers, len(configs))} worker(s)", flush=True)
    jobs = [FrontierPoint(args.features, args.backbone, args.data, cfg, str(device)) for cfg in configs]
    try:
        points = run_jobs(fit_point, jobs, workers)
    finally:
        release()
    for point in points:
        print(f"  {label(point):28s} CLS R² {point['cls_r2']:.4f} L0 {point['cls_l0']:5.1f} | patch R² "
              f"{point['patch_r2']:.4f} L0 {point['patch_l0']:5.1f} | CLS-replaced accuracy "
              f"{point['cls_replaced_accuracy']:.4f}")
    original = replaced_accuracy(cache, device)
    with staged(args.metrics, args.table, args.figure) as (metrics, table, figure):
        FrontierRecord(original_accuracy=original, **{label(p): sweep_point(p) for p in points}).write(metrics)
        pd.DataFrame([{k: v for k, v in p.items() if not k.endswith("_per_layer")} for p in points]).to_csv(
            table, index=False)
        plots.clt_frontier(points, f"Cross-layer vs per-layer: reconstruction vs sparsity ({base.tokens} training "
                           f"tokens, {base.dict_size} features/layer, {sweep.epochs} epochs)", figure)
    print(f"clt_frontier: wrote {args.metrics}, {args.table}, {args.figure} in {time.perf_counter() - started:.0f}s")


if __name__ == "__main__":
    run(main)
