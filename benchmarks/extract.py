"""Extraction cost, side by side in one run on the same Fashion-MNIST images, for each backbone:

  forward   plain forward_intermediates / hooked forward, nothing captured or stored
  extract   full extraction to a sharded Zarr store (default params: float16, mlp_io token dump for the ViT)
  ratio     extract time / forward time — target ≤ 1.10 for cnn and vit
  write CPU the writer thread's CPU seconds / the forward's seconds — target ≤ 10 %: writes cheap enough that
            they need not hide behind compute (with extract.procs auto every core computes)

Both run with the torch threads of one extraction process (one: laya.core.parallel.one_thread), so the ratio is the
cost of capturing and writing, not a difference in threads.

plus a codec comparison (lz4, zstd, none) and peak RSS extracting N vs 10·N samples (target ratio ≤ 1.3).

    python benchmarks/extract.py [--samples 30000] [--rss-samples 3000 (0: skip)] [--backbones mlp cnn vit]

Uses the trained backbones under data/backbones/ when present, else the same architectures at random init
(throughput does not depend on the weights).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import torch

import laya
from laya.backbones import BackboneCard, build_model, load_backbone, save_backbone
from laya.backbones.config import entry
from laya.core.config import from_dict, section
from laya.core.parallel import one_thread
from laya.core.params import load_params
from laya.data import DataConfig, PreparedData, RawDataset, write_prepared
from laya.data.fashion_mnist import load_fashion_mnist
from laya.extract import ExtractConfig, LayerTap, extract_features
from record import recorded  # benchmarks/record.py: the output kept in benchmarks/results/

REPO = Path(__file__).resolve().parents[1]


def make_prepared(total: int, out: Path) -> PreparedData:
    """A prepared store of `total` real images: 90 % train, 10 % val, plus a test split of total/10."""
    raw = load_fashion_mnist(None, Path.home() / ".cache" / "laya" / "fashion-mnist")
    n_test = max(1, total // 10)
    subset = RawDataset("fashion_mnist", raw.classes, raw.train_images[:total], raw.train_labels[:total],
                        raw.test_images[:n_test], raw.test_labels[:n_test], raw.source)
    write_prepared(subset, DataConfig(val_fraction=0.1), out)
    return PreparedData(out)


def backbone_dir(name: str, data: PreparedData, params: dict, tmp: Path) -> Path:
    trained = REPO / "data" / "backbones" / name
    if (trained / "model.safetensors").is_file():
        return trained
    key = f"backbones.{name}.backbone"
    cfg = entry(params, name).backbone
    model = build_model(cfg, 1, 28, 10, key)
    card = BackboneCard(name=name, config=cfg, in_chans=1, img_size=28, num_classes=10, classes=data.classes,
                        mean=data.attrs["mean"], std=data.attrs["std"], data_sha256=data.attrs["data_sha256"],
                        laya_version=laya.__version__)
    return save_backbone(tmp / "backbones" / name, model, card)


@torch.no_grad()
def forward_seconds(model, meta, data: PreparedData, cfg: ExtractConfig) -> float:
    """Time the plain forward pass (forward_intermediates or hooked forward, no MLP-I/O capture) over every
    split, reading images shard by shard as extraction does, with its thread count; nothing is kept."""
    tap = LayerTap(model, cfg.pooling, hook_layers=meta.config.layers, mlp_io=False)
    prep = meta.preprocess()
    with one_thread():
        tap(prep(torch.from_numpy(data.images("train", 0, cfg.batch_size))))  # warm-up
        start = time.perf_counter()
        for split in ("train", "val", "test"):
            for lo in range(0, data.num_samples(split), cfg.shard_size):
                images = data.images(split, lo, lo + cfg.shard_size)
                for b in range(0, len(images), cfg.batch_size):
                    tap(prep(torch.from_numpy(images[b:b + cfg.batch_size])))
        return time.perf_counter() - start


def extract_seconds(model, meta, data, cfg, out: Path) -> tuple[float, dict]:
    """Seconds of one extraction; the plan the stage prints is left out of the benchmark's own lines."""
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        summary = extract_features(model, meta, data, out, cfg, torch.device("cpu"))
    return time.perf_counter() - start, summary


def rss_child(prepared: str, backbone: str) -> None:
    """Run one extraction in this (fresh) process and print its peak RSS in MB."""
    cfg = from_dict(ExtractConfig, section(load_params(REPO / "params.yaml"), "extract"), "extract")
    model, meta = load_backbone(backbone)
    with tempfile.TemporaryDirectory() as tmp:
        extract_features(model, meta, PreparedData(prepared), Path(tmp) / "f.zarr", cfg, torch.device("cpu"))
    print(json.dumps({"peak_mb": peak_rss_mb()}))


def peak_rss_mb() -> float:
    """This process's peak resident set (VmHWM). Unlike ru_maxrss it is not inherited across fork+exec."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def peak_rss(prepared: Path, backbone: Path) -> float:
    """Peak RSS of a fresh process that opens `prepared` and extracts it with `backbone`."""
    out = subprocess.run([sys.executable, __file__, "--rss-child", str(prepared), str(backbone)],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])["peak_mb"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--samples", type=int, default=30000, help="images for the throughput runs (+10 %% test)")
    p.add_argument("--rss-samples", type=int, default=3000, help="N for the peak-RSS runs (N vs 10·N); 0 skips them")
    p.add_argument("--backbones", nargs="+", default=["mlp", "cnn", "vit"])
    p.add_argument("--codecs", nargs="+", default=["none", "lz4", "zstd"])
    p.add_argument("--rounds", type=int, default=2, help="interleaved repetitions; the best time of each counts")
    p.add_argument("--rss-child", nargs=2, default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.rss_child:
        return rss_child(*args.rss_child)
    params = load_params(REPO / "params.yaml")
    base = from_dict(ExtractConfig, section(params, "extract"), "extract")
    print(f"torch threads: 1 (as one extraction process), cpus: {os.cpu_count()}, extract params: {base}")
    with tempfile.TemporaryDirectory() as tmp:
        data = make_prepared(args.samples, Path(tmp) / "prepared.zarr")
        total = sum(data.num_samples(s) for s in ("train", "val", "test"))
        print(f"images per pass: {total} (train/val/test {data.num_samples('train')}/"
              f"{data.num_samples('val')}/{data.num_samples('test')})")
        for name in args.backbones:
            model, meta = load_backbone(backbone_dir(name, data, params, Path(tmp)))
            forward, extract = [], {codec: [] for codec in args.codecs}
            for _ in range(args.rounds):  # interleaved rounds; the best of each cancels machine noise
                forward.append(forward_seconds(model, meta, data, base))
                for codec in args.codecs:
                    out = Path(tmp) / f"{name}-{codec}.zarr"
                    extract[codec].append(extract_seconds(model, meta, data, replace(base, codec=codec), out))
                    shutil.rmtree(out)
            fwd = min(forward)
            for codec in args.codecs:
                secs, summary = min(extract[codec], key=lambda run: run[0])
                mb = summary["raw_bytes_written"] / 1e6
                cpu = summary["write_cpu_seconds"]
                print(f"{name:4s} codec={codec:5s} forward {total / fwd:7.0f} img/s | extract {total / secs:7.0f} "
                      f"img/s | ratio {secs / fwd:5.3f} | write {mb / secs:6.1f} MB/s ({mb:.0f} MB raw → "
                      f"{summary['bytes'] / 1e6:.0f} MB on disk, {summary['files']} files) | write CPU "
                      f"{cpu:5.2f} s = {100 * cpu / fwd:4.1f} % of the forward ({mb / max(cpu, 1e-9):6.0f} MB per "
                      f"CPU s)", flush=True)
        if args.rss_samples <= 0:
            return
        small_data = make_prepared(args.rss_samples, Path(tmp) / "small.zarr")
        large_data = make_prepared(10 * args.rss_samples, Path(tmp) / "large.zarr")
        for name in args.backbones:
            backbone = backbone_dir(name, data, params, Path(tmp))
            small, large = peak_rss(small_data.path, backbone), peak_rss(large_data.path, backbone)
            print(f"{name:4s} peak RSS extracting N={int(args.rss_samples * 1.1)}: {small:6.0f} MB | "
                  f"10·N: {large:6.0f} MB | ratio {large / small:5.3f}")


if __name__ == "__main__":
    with recorded(__file__):
        main()
