"""Why the cache: seconds per epoch of training the LAYA head, side by side in one run on the same data:

  cache   mini-batches of per-layer activations read chunk-wise from data/features/<name>.zarr
  live    the frozen backbone recomputes the layers from the prepared images at every step
          (what a user without a cache does), then the same head step
  ratio   live / cache — target ≥ 20× for cnn and vit

    python benchmarks/heads.py [--backbones mlp cnn vit] [--samples 20000] [--epochs 2]

Needs the pipeline's outputs (`make repro`): data/prepared, data/backbones/<name>, data/features/<name>.zarr.
Both modes train a fresh LAYA head (params heads.laya) with the train params' batch size and learning rate on
the first --samples training images; the best epoch of --epochs counts.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

from laya.backbones import Preprocess, load_backbone
from laya.config import from_dict, load_params, section
from laya.data import PreparedData
from laya.extract import LayerTap
from laya.heads import build
from laya.store import FeatureStore
from laya.train import HeadsConfig, TrainConfig

REPO = Path(__file__).resolve().parents[1]


def _step(head, optimizer, layers: list[torch.Tensor], labels: torch.Tensor) -> None:
    loss = nn.functional.cross_entropy(head(layers), labels)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()


def cache_epoch(store: FeatureStore, head, optimizer, cfg: TrainConfig, samples: int, seed: int) -> float:
    """One epoch over the first `samples` cached training rows, shuffled chunk-wise as `train` does."""
    rows = store.block_rows("train")
    blocks = np.arange(0, samples, rows)
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    for w in range(0, len(blocks), cfg.window_blocks):
        read = [store.read_block("train", int(b), min(int(b) + rows, samples), list(range(len(store.layers))))
                for b in rng.permutation(blocks)[w:w + cfg.window_blocks]]
        feats = [np.concatenate([r[0][j] for r in read]) for j in range(len(store.layers))]
        labels = np.concatenate([r[1] for r in read])
        order = rng.permutation(len(labels))
        for lo in range(0, len(order), cfg.batch_size):
            pick = order[lo:lo + cfg.batch_size]
            _step(head, optimizer, [torch.from_numpy(f[pick]).float() for f in feats],
                  torch.from_numpy(labels[pick].astype(np.int64)))
    return time.perf_counter() - start


def live_epoch(data: PreparedData, tap: LayerTap, prep: Preprocess, head, optimizer, cfg: TrainConfig,
               samples: int, seed: int) -> float:
    """One epoch over the same images, each mini-batch run through the frozen backbone first."""
    images, labels = data.images("train", 0, samples), data.labels("train")[:samples].astype(np.int64)
    order = np.random.default_rng(seed).permutation(samples)
    start = time.perf_counter()
    for lo in range(0, samples, cfg.batch_size):
        pick = np.sort(order[lo:lo + cfg.batch_size])
        layers = [t.clone() for t in tap(prep(torch.from_numpy(images[pick]))).layers]  # out of inference mode
        _step(head, optimizer, layers, torch.from_numpy(labels[pick]))
    return time.perf_counter() - start


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backbones", nargs="+", default=["mlp", "cnn", "vit"])
    p.add_argument("--samples", type=int, default=20000, help="training images per epoch (both modes)")
    p.add_argument("--epochs", type=int, default=2, help="epochs per mode; the fastest counts")
    args = p.parse_args()
    params = load_params(REPO / "params.yaml")
    heads = from_dict(HeadsConfig, section(params, "heads"), "heads")
    cfg = from_dict(TrainConfig, section(params, "train"), "train")
    data = PreparedData(REPO / "data" / "prepared" / f"{params['data']['name']}.zarr")
    print(f"torch threads: {torch.get_num_threads()}, batch {cfg.batch_size}, LAYA {heads.params('laya')}")
    for name in args.backbones:
        store = FeatureStore.open(REPO / "data" / "features" / f"{name}.zarr")
        model, meta = load_backbone(REPO / "data" / "backbones" / name)
        tap = LayerTap(model, store.attrs["extract"]["pooling"], hook_layers=meta["config"].get("layers"))
        prep = Preprocess(meta["mean"], meta["std"], meta["img_size"])
        samples = min(args.samples, store.num_samples("train"))
        times = {"cache": [], "live": []}
        for epoch in range(args.epochs):  # interleaved, so machine noise hits both modes alike
            for mode in times:
                torch.manual_seed(0)
                head = build("laya", store.dims, len(store.attrs["classes"]), **heads.params("laya"))
                optimizer = torch.optim.Adam(head.parameters(), lr=cfg.lr)
                if mode == "cache":
                    times[mode].append(cache_epoch(store, head, optimizer, cfg, samples, epoch))
                else:
                    times[mode].append(live_epoch(data, tap, prep, head, optimizer, cfg, samples, epoch))
        cache, live = min(times["cache"]), min(times["live"])
        print(f"{name:4s} LAYA epoch of {samples} samples: cache {cache:6.2f} s | live backbone {live:6.2f} s | "
              f"ratio {live / cache:6.1f}×", flush=True)


if __name__ == "__main__":
    main()
