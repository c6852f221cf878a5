"""Why the cache: seconds per epoch of training the LAYA head, side by side in one run on the same data:

  cache   the train stage's own epoch (laya.train.train_epoch) over mini-batches read chunk-wise from
          data/features/<name>.zarr, decoded blocks kept in memory across epochs as the stage does
  live    the same epoch function, but every mini-batch's layers are recomputed by the frozen backbone from
          the prepared images (what a user without a cache does)
  ratio   live / cache — target ≥ 20× for cnn and vit
  FLOP ratio  (backbone forward + head step) / head step, in matmul/conv FLOPs: the ratio if both modes ran
          at the same FLOP rate and reading the cache cost nothing (convolutions and small attention ops run
          slower per FLOP than the head's matmuls, so a measured ratio can exceed it)

    python benchmarks/heads.py [--backbones mlp cnn vit] [--epochs 3] [--batch-size N] [--threads 1 2]

Both modes run with the torch thread count of the train stage (--threads, default 1: laya.core.parallel trains every
head with one thread per run, one run per core); --threads 1 2 prints both counts side by side. A second thread
speeds the backbone's large ops up nearly 2× and the head's small ones far less, so the ratio depends on it.

Needs the pipeline's outputs (`make repro`): data/prepared, data/backbones/<name>, data/features/<name>.zarr.
Both modes train a fresh LAYA head (params heads.laya, train.lr, train.batch_size unless --batch-size) on the
whole training split; the fastest of --epochs epochs counts (the first cache epoch reads the disk).

A standard-size backbone instead of the pipeline's (random init and frozen: speed does not depend on the weights;
--samples real Fashion-MNIST images upsampled to the model's 224² input), with its extraction throughput by the
extract stage itself (pipeline/extract.py) with 1 and with 2 processes (extract.procs):

    python benchmarks/heads.py --backbone timm:vit_small_patch16_224 [--samples 1024] [--epochs 2]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import torch
import yaml
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

import laya
from laya.backbones import BackboneCard, BackboneConfig, build_model, load_backbone, save_backbone
from laya.core.config import from_dict, section
from laya.core.parallel import THREADS_PER_RUN, torch_threads
from laya.core.params import load_params
from laya.data import PreparedData
from laya.extract import LayerTap
from laya.heads import build
from laya.images import Preprocess
from laya.settings import resolve
from laya.storage.store import FeatureStore
from laya.train import HeadsConfig, TrainConfig, moving_average, train_epoch
from laya.train.loop import adam
from record import recorded  # benchmarks/record.py: the output kept in benchmarks/results/

REPO = Path(__file__).resolve().parents[1]
CACHE_REPEATS = 5


def live_batches(data: PreparedData, tap: LayerTap, prep: Preprocess, cfg: TrainConfig, samples: int, seed: int):
    """Mini-batches of the same size whose layers the frozen backbone computes from the images every time."""
    images, labels = data.images("train", 0, samples), data.labels("train")[:samples].astype(np.int64)
    order = np.random.default_rng(seed).permutation(samples)
    for lo in range(0, samples, cfg.batch_size):
        pick = np.sort(order[lo:lo + cfg.batch_size])
        layers = [t.clone() for t in tap(prep(torch.from_numpy(images[pick]))).layers]  # leave inference mode
        yield layers, torch.from_numpy(labels[pick])


def flop_ratio(tap: LayerTap, prep: Preprocess, head: nn.Module, images: np.ndarray) -> float:
    """(backbone forward + head step) / head step in matmul/conv FLOPs (torch's FlopCounterMode) on one batch."""
    with FlopCounterMode(display=False) as count:
        layers = [t.clone() for t in tap(prep(torch.from_numpy(images))).layers]
    backbone = count.get_total_flops()
    with FlopCounterMode(display=False) as count:
        nn.functional.cross_entropy(head(layers), torch.zeros(len(images), dtype=torch.long)).backward()
    step = count.get_total_flops()
    return (backbone + step) / step


def compare(name: str, store: FeatureStore, data: PreparedData, backbone: Path, heads: HeadsConfig,
            cfg: TrainConfig, epochs: int, threads: int) -> tuple[float, float, float]:
    """(cache, live) seconds of the fastest LAYA epoch over the store's training split with `threads` torch
    threads, and the FLOP ratio; also the cache epoch without train.input_dropout (its masks are a cost of the head
    step that the FLOP ratio does not count). Cache epochs are short, so each runs CACHE_REPEATS
    times per live epoch."""
    store.keep_in_memory(cfg.memory_mb << 20)
    model, meta = load_backbone(backbone)
    tap = LayerTap(model, store.info.extract["pooling"], hook_layers=meta.config.layers)
    prep = meta.preprocess()
    samples = store.num_samples("train")
    times = {"cache": [], "cache without dropout": [], "live": []}
    for epoch in range(epochs):  # interleaved, so machine noise hits every mode alike
        for mode in [m for m in times for _ in range(1 if m == "live" else CACHE_REPEATS)]:
            torch.manual_seed(0)
            head = build("laya", store.dims, len(store.info.classes), config=heads.config("laya"))
            optimizer = adam(head, cfg.lr, cfg.weight_decay)  # the train stage's optimizer
            batches = (live_batches(data, tap, prep, cfg, samples, epoch) if mode == "live"
                       else store.batches("train", cfg.batch_size, shuffle=True, seed=epoch,
                                          window_blocks=cfg.window_blocks))
            dropout = 0.0 if mode == "cache without dropout" else cfg.input_dropout
            with torch_threads(threads):
                start = time.perf_counter()
                train_epoch(head, optimizer, nn.CrossEntropyLoss(), batches, dropout, mixup=cfg.mixup,
                            rng=np.random.default_rng(epoch), average=moving_average(head, cfg.ema))
                times[mode].append(time.perf_counter() - start)
    cache, bare, live = (min(times[mode]) for mode in times)
    flops = flop_ratio(tap, prep, head, data.images("train", 0, cfg.batch_size))
    print(f"{name:4s} LAYA epoch of {samples} samples, {threads} thread{'s' * (threads > 1)}: cache {cache:6.3f} s | "
          f"live backbone {live:6.2f} s | ratio {live / cache:6.1f}× | FLOP ratio {flops:5.1f}× | measured / FLOP "
          f"ratio {live / cache / flops:4.2f}", flush=True)
    print(f"{name:4s}   without input dropout ({cfg.input_dropout} → 0): cache {bare:6.3f} s | ratio "
          f"{live / bare:6.1f}× | measured / FLOP ratio {live / bare / flops:4.2f}", flush=True)
    return cache, live, flops


def standard_size(spec: str, samples: int, heads: HeadsConfig, cfg: TrainConfig, epochs: int,
                  threads: list[int]) -> None:
    """A timm model at 224², random init: its cache built by the extract stage with 1 and 2 processes (timed),
    then the cache-vs-live epoch comparison on that cache."""
    from extract import make_prepared  # benchmarks/extract.py: a prepared store of real Fashion-MNIST images

    model_name = spec.removeprefix("timm:")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        data = make_prepared(samples, tmp / "prepared.zarr")
        bb = BackboneConfig(arch="timm", model={"name": model_name}, input_size=224)
        torch.manual_seed(0)
        model = build_model(bb, 1, 224, len(data.classes), "backbones.std").eval()
        card = BackboneCard(name="std", config=bb, in_chans=1, img_size=224, num_classes=len(data.classes),
                            classes=data.classes, mean=data.attrs["mean"], std=data.attrs["std"],
                            data_sha256=data.attrs["data_sha256"], laya_version=laya.__version__)
        backbone = save_backbone(tmp / "backbone", model, card)
        total = sum(data.num_samples(s) for s in ("train", "val", "test"))
        seconds = {}
        for procs in (1, 2):
            params = tmp / f"params{procs}.yaml"
            params.write_text(yaml.safe_dump({"device": "cpu", "backbones": {"std": {"backbone": {
                "arch": "timm", "model": {"name": model_name}, "input_size": 224}}},
                "extract": {"procs": procs, "shard_size": 128, "batch_size": 64}}))
            start = time.perf_counter()
            subprocess.run([sys.executable, str(REPO / "pipeline" / "extract.py"), "--params", str(params),
                            "--name", "std", "--data", str(data.path), "--backbone", str(backbone),
                            "--out", str(tmp / f"std{procs}.zarr")], check=True, capture_output=True)
            seconds[procs] = time.perf_counter() - start
        print(f"{model_name}: extraction of {total} images at 224² (the extract stage, process start included): "
              f"1 process {total / seconds[1]:5.1f} img/s | 2 processes {total / seconds[2]:5.1f} img/s | "
              f"speed-up {seconds[1] / seconds[2]:4.2f}×", flush=True)
        store = FeatureStore.open(tmp / "std1.zarr")
        for count in threads:
            compare(model_name, store, data, backbone, heads, cfg, epochs, count)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backbones", nargs="+", default=["mlp", "cnn", "vit"])
    p.add_argument("--backbone", default=None, help="timm:<model name> — a standard-size backbone instead")
    p.add_argument("--samples", type=int, default=1024, help="with --backbone: real images (+10 %% test)")
    p.add_argument("--epochs", type=int, default=3, help="epochs per mode, interleaved; the fastest counts")
    p.add_argument("--batch-size", type=int, default=None, help="default: params train.batch_size")
    p.add_argument("--threads", type=int, nargs="+", default=[THREADS_PER_RUN],
                   help="torch threads of both modes (default: the train stage's, one per run)")
    args = p.parse_args()
    params = load_params(REPO / "params.yaml")
    heads = HeadsConfig.parse(section(params, "heads"))
    train = from_dict(TrainConfig, section(params, "train"), "train")
    own = {name: entry["train"] for name, entry in params["backbones"].items() if entry.get("train")}
    print(f"torch threads: {args.threads}, batch {args.batch_size or train.batch_size}, "
          f"LAYA {asdict(heads.config('laya'))}, backbones' own train keys {own}")
    if args.backbone:
        cfg = replace(train, batch_size=args.batch_size or train.batch_size)
        return standard_size(args.backbone, args.samples, heads, cfg, args.epochs, args.threads)
    data = PreparedData(REPO / "data" / "prepared" / f"{params['data']['name']}.zarr")
    for name in args.backbones:
        cfg = replace(resolve(params, name).train, batch_size=args.batch_size or train.batch_size)
        store = FeatureStore.open(REPO / "data" / "features" / f"{name}.zarr")
        for count in args.threads:
            compare(name, store, data, REPO / "data" / "backbones" / name, heads, cfg, args.epochs, count)


if __name__ == "__main__":
    with recorded(__file__):
        main()
