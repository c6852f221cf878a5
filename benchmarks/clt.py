"""Why the cache, for transcoders: CLT training throughput (tokens/s), side by side in one run on the same images:

  cache   Adam steps on (MLP input, MLP output) tokens read from data/features/<vit>.zarr (CLS + the cached
          patch tokens of each image, as the clt stage trains on them)
  live    the same steps, but every batch's tokens come from running the frozen ViT on the images and
          recording each block's MLP input and output (what a user without a cache does)
  ratio   cache / live tokens per second

    python benchmarks/clt.py [--images 20000] [--repeats 2]

Needs the pipeline's outputs (`make repro`). Uses params `clt` (dict size, activation, batch size, lr).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch

from laya.backbones import load_backbone
from laya.clt import CLTConfig, CrossLayerTranscoder, load_tokens
from laya.clt.fit import clt_loss
from laya.core.config import from_dict, section
from laya.core.params import load_params
from laya.data import PreparedData
from laya.extract import LayerTap
from laya.images import Preprocess
from laya.storage.store import FeatureStore
from record import recorded  # benchmarks/record.py: the output kept in benchmarks/results/

REPO = Path(__file__).resolve().parents[1]


def steps(model: CrossLayerTranscoder, cfg: CLTConfig, batches) -> tuple[int, float]:
    """Run Adam steps over (x, y) batches; returns (tokens seen, seconds)."""
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    seen, start = 0, time.perf_counter()
    for x, y in batches:
        loss = clt_loss(model, x, y, cfg.sparsity)[0]
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        seen += len(x)
    return seen, time.perf_counter() - start


def live_batches(tap: LayerTap, prep: Preprocess, images: np.ndarray, per_image: int, patches: int, batch: int,
                 seed: int):
    """Tokens of CLS + `per_image − 1` random patch positions per image, recorded from the ViT batch by batch."""
    rng = np.random.default_rng(seed)
    step = max(1, batch // per_image)
    for lo in range(0, len(images), step):
        chunk = torch.from_numpy(images[lo:lo + step])
        picks = np.stack([np.r_[0, 1 + rng.choice(patches, per_image - 1, replace=False)] for _ in range(len(chunk))])
        out = tap(prep(chunk))  # every token: (B, N, L, d)
        rows, tokens = torch.arange(len(chunk))[:, None], torch.from_numpy(picks)
        mlp_in, mlp_out = out.mlp_in[rows, tokens], out.mlp_out[rows, tokens]  # the picked tokens: (B, T, L, d)
        width, layers = mlp_in.shape[-1], mlp_in.shape[2]
        yield mlp_in.reshape(-1, layers, width).clone(), mlp_out.reshape(-1, layers, width).clone()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--images", type=int, default=20000, help="training images per mode")
    p.add_argument("--repeats", type=int, default=2, help="passes per mode, interleaved; the fastest counts")
    args = p.parse_args()
    params = load_params(REPO / "params.yaml")
    cfg = from_dict(CLTConfig, section(params, "clt"), "clt")
    store_path = REPO / "data" / "features" / f"{cfg.backbone}.zarr"
    store = FeatureStore.open(store_path)
    vit, meta = load_backbone(REPO / "data" / "backbones" / cfg.backbone)
    tap = LayerTap(vit, "cls", mlp_io=True)
    prep = meta.preprocess()
    images = PreparedData(REPO / "data" / "prepared" / f"{params['data']['name']}.zarr").images("train", 0,
                                                                                               args.images)
    per_image = 1 + store.info.patch_tokens_kept
    print(f"torch threads: {torch.get_num_threads()}, {cfg.activation} CLT, {cfg.dict_size} features/layer, "
          f"batch {cfg.batch_size} tokens, {args.images} images × {per_image} tokens")
    rates = {"cache": [], "live": []}
    for repeat in range(args.repeats):
        for mode in rates:
            torch.manual_seed(0)
            start = time.perf_counter()
            if mode == "cache":  # reading the cache counts: it is part of what the stage does
                tokens = load_tokens(store, "train", "both", args.images)
                batches = tokens.batches(cfg.batch_size, shuffle=True, seed=repeat)
            else:
                batches = live_batches(tap, prep, images, per_image, store.info.num_patches,
                                       cfg.batch_size, repeat)
            model = CrossLayerTranscoder(len(store.layers), store.dims[0], cfg)
            read = time.perf_counter() - start
            seen, seconds = steps(model, cfg, batches)
            rates[mode].append(seen / (seconds + read))
    cache, live = max(rates["cache"]), max(rates["live"])
    print(f"{cfg.backbone} CLT training: cache {cache:9.0f} tokens/s | live ViT {live:9.0f} tokens/s | "
          f"ratio {cache / live:5.1f}×")


if __name__ == "__main__":
    with recorded(__file__):
        main()
