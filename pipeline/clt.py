"""Stage `clt`: train a cross-layer transcoder on a ViT's cached MLP inputs/outputs, score its reconstructions
(CLS and patch tokens), run the ViT with MLP outputs replaced by the CLT, and map which layers build which.

    python pipeline/clt.py --features data/features/vit.zarr --backbone data/backbones/vit \
        --data data/prepared/fashion_mnist.zarr --out data/clt --metrics reports/details/clt.json \
        --details reports/clt/details.json --figures reports/figures/clt

Reads params `clt` and `device`. Training reads the feature cache only; the replacement runs the frozen ViT on
the test images.
"""

import time
from dataclasses import asdict

from laya.clt import CLTConfig, save_clt
from laya.clt.asymmetry import asymmetry, describe_asymmetry
from laya.clt.run import ViTCache, contributions, reconstruction, replacement_accuracies, test_tokens, train_clt
from laya.core import plots
from laya.core.cli import parser, run
from laya.core.config import ConfigError, from_dict, section
from laya.core.device import device_from_params
from laya.core.io import staged, write_json
from laya.core.params import load_params
from laya.records.clt import CLTRecord, LayerTokenScores, ReplacedAccuracy


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--features", required=True, help="the ViT's feature store, built with extract.mlp_io: true")
    p.add_argument("--backbone", required=True, help="the frozen ViT's folder (for the replacement runs)")
    p.add_argument("--data", required=True, help="prepared dataset (test images for the replacement runs)")
    p.add_argument("--out", required=True, help="folder for the trained CLT (safetensors + config.json)")
    p.add_argument("--metrics", required=True, help="detail metrics JSON (the report derives the headline)")
    p.add_argument("--details", required=True, help="JSON of contribution matrices and the training curve")
    p.add_argument("--figures", required=True, help="folder for the PNG figures")
    args = p.parse_args()
    params = load_params(args.params)
    cfg = from_dict(CLTConfig, section(params, "clt"), "clt")
    device = device_from_params(params)
    cache = ViTCache.open(args.features, args.backbone, args.data)
    store = cache.store
    if cfg.replace_from >= len(store.layers):
        raise ConfigError(f"clt.replace_from: {cfg.replace_from} is past the last block ({len(store.layers) - 1}) "
                          f"of {args.features}; use 0..{len(store.layers) - 1}.")
    started = time.perf_counter()
    print(f"clt: {cfg.activation} CLT, {cfg.dict_size} features × {len(store.layers)} layers, {cfg.tokens} tokens "
          f"of {store.path}")
    model, history = train_clt(store, cfg, device=device)
    tests = test_tokens(store)
    scores = reconstruction(model, tests, device)
    replaced = replacement_accuracies(model, cache, cfg.replace_from, device)
    shares = contributions(model, tests, device)
    record = CLTRecord(backbone=store.info.backbone,
                       **{kind: LayerTokenScores.of(s, store.layers) for kind, s in scores.items()},
                       replacement=ReplacedAccuracy(**replaced, replace_from=cfg.replace_from),
                       asymmetry=asymmetry(model, tests, store.info.patch_tokens_kept, cfg.bootstrap, cfg.seed, device))
    with staged(args.out, args.metrics, args.details, args.figures) as (out, metrics_path, details, tmp):
        save_clt(model, out, layers=store.layers, cache_fingerprint=store.fingerprint.hash, history=history)
        record.write(metrics_path)
        write_json(details, {"layers": store.layers, "contributions": shares, "history": history,
                             "params": asdict(cfg)})
        tmp.mkdir(parents=True)
        for kind in tests:
            plots.contribution_heatmap(shares[kind], store.layers, f"CLT ({cfg.activation}): share of block j's MLP "
                                       f"output built from block i — {kind} tokens", tmp / f"contributions_{kind}.png")
        plots.top_source_accuracy(replaced, "ViT, CLS MLP outputs from the CLT with top-k sources per block",
                                  tmp / "top_sources.png")
    cls, patch = scores["cls"], scores["patch"]
    print(f"clt: CLS R² {cls['r2']:.4f} cos {cls['cosine']:.4f} L0 {cls['l0']:.1f} | patch R² {patch['r2']:.4f} "
          f"cos {patch['cosine']:.4f} L0 {patch['l0']:.1f} | test accuracy original {replaced['original']:.4f}, "
          f"CLS replaced {replaced['cls']:.4f}, patch replaced {replaced['patch']:.4f}, patch from block "
          f"{cfg.replace_from} {replaced['patch_from_layer']:.4f}; wrote {args.out} in "
          f"{time.perf_counter() - started:.0f}s")
    print(describe_asymmetry("clt", record.asymmetry))


if __name__ == "__main__":
    run(main)
