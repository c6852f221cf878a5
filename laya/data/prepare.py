"""Turn a raw dataset into the prepared store: seeded stratified train/val split, official test, uint8 images.

Layout of `<dataset>.zarr`:  `<split>/images` (N, H, W, C) uint8 · `<split>/labels` (N,) int32 ·
`<split>/index` (N,) int64 row in the official file it came from; attrs: classes, per-channel mean/std of
the train split (for normalisation), sizes, the data params used and a content hash (`data_sha256`) that
feature stores carry in their fingerprint.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch
import zarr

from laya.core.config import SPLITS, ConfigError
from laya.core.io import atomic_path
from laya.data.cifar10 import load_cifar10
from laya.data.config import DataConfig
from laya.data.fashion_mnist import load_fashion_mnist
from laya.data.imagefolder import load_imagefolder
from laya.data.raw import RawDataset
from laya.storage.shards import ShardPlan
from laya.storage.zarrio import create_sample_array

SHARD_ROWS = 1 << 16


def load_raw(cfg: DataConfig, download_dir: Path) -> RawDataset:
    """Dispatch on `data.name` to the loader of that dataset."""
    if cfg.name == "fashion_mnist":
        return load_fashion_mnist(cfg.root, download_dir, allow_download=cfg.download)
    if cfg.name == "cifar10":
        return load_cifar10(cfg.root)
    return load_imagefolder(cfg.root, cfg.image_size, cfg.channels, cfg.test_fraction, cfg.seed)


def resize(images: np.ndarray, size: list[int] | None) -> np.ndarray:
    """Bilinear resize of uint8 (N, H, W, C) images to `size` = [H, W] (no-op when None or equal)."""
    if size is None or tuple(size) == images.shape[1:3]:
        return images
    out = np.empty((len(images), size[0], size[1], images.shape[3]), np.uint8)
    for start in range(0, len(images), 4096):
        batch = torch.from_numpy(images[start:start + 4096]).permute(0, 3, 1, 2).float()
        batch = torch.nn.functional.interpolate(batch, size=tuple(size), mode="bilinear", antialias=True)
        out[start:start + 4096] = batch.round().clamp(0, 255).byte().permute(0, 2, 3, 1).numpy()
    return out


def split_indices(labels: np.ndarray, cfg: DataConfig) -> dict[str, np.ndarray]:
    """Stratified, seeded train/val split of the official training rows; test is all official test rows."""
    from sklearn.model_selection import train_test_split  # sklearn takes ~2 s to import: only when splitting

    rows = np.arange(len(labels))
    stratify = labels if np.bincount(labels).min() >= 2 else None
    train, val = train_test_split(rows, test_size=cfg.val_fraction, random_state=cfg.seed, stratify=stratify)
    return {"train": np.sort(train), "val": np.sort(val)}


def prepare(cfg: DataConfig, out: str | Path, download_dir: Path) -> dict:
    """Load the dataset named by `cfg` and write its prepared store. Returns a summary."""
    return write_prepared(load_raw(cfg, download_dir), cfg, out)


def write_prepared(raw: RawDataset, cfg: DataConfig, out: str | Path) -> dict:
    """Split, (optionally) subset and resize `raw`, and write the prepared store atomically."""
    if cfg.name != "imagefolder":
        raw.train_images = resize(raw.train_images, cfg.image_size)
        raw.test_images = resize(raw.test_images, cfg.image_size)
    parts = split_indices(raw.train_labels, cfg)
    parts["test"] = np.arange(len(raw.test_labels))
    if cfg.subset is not None:
        parts = {split: rows[: cfg.subset] for split, rows in parts.items()}
    source = {"train": (raw.train_images, raw.train_labels), "val": (raw.train_images, raw.train_labels),
              "test": (raw.test_images, raw.test_labels)}
    mean, std = channel_stats(raw.train_images[parts["train"]])
    digest = hashlib.sha256()
    out = Path(out)
    with atomic_path(out) as tmp:
        root = zarr.open_group(tmp, mode="w")
        for split in SPLITS:
            images, labels = source[split][0][parts[split]], source[split][1][parts[split]]
            for name, array in (("images", images), ("labels", labels), ("index", parts[split].astype(np.int64))):
                target = create_sample_array(root, f"{split}/{name}", ShardPlan(len(array), SHARD_ROWS),
                                             array.shape[1:], array.dtype, "lz4")
                target[:] = array
                digest.update(np.ascontiguousarray(array).tobytes())
        root.attrs.update({
            "dataset": raw.name, "classes": raw.classes, "image_shape": list(raw.train_images.shape[1:]),
            "sizes": {split: len(parts[split]) for split in SPLITS}, "mean": mean, "std": std,
            "params": asdict(cfg), "source": raw.source, "data_sha256": digest.hexdigest(),
        })
    return {"path": str(out), "sizes": {s: len(parts[s]) for s in SPLITS}, "data_sha256": digest.hexdigest()}


def channel_stats(images: np.ndarray) -> tuple[list[float], list[float]]:
    """Per-channel mean and std of uint8 (N, H, W, C) images scaled to [0, 1], in float64 blocks."""
    total = np.zeros(images.shape[-1])
    total_sq = np.zeros(images.shape[-1])
    for start in range(0, len(images), 8192):
        block = images[start:start + 8192].astype(np.float64) / 255.0
        total += block.sum(axis=(0, 1, 2))
        total_sq += (block**2).sum(axis=(0, 1, 2))
    count = max(1, images[..., 0].size)
    mean = total / count
    std = np.sqrt(np.maximum(total_sq / count - mean**2, 1e-12))
    return [round(float(m), 6) for m in mean], [round(float(s), 6) for s in std]


class PreparedData:
    """Read side of the prepared store: images and labels per split, class names, normalisation stats."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        if not (self.path / "zarr.json").is_file():
            raise ConfigError(f"{self.path}: no prepared dataset here; run `dvc repro prepare` first.")
        self.root = zarr.open_group(self.path, mode="r")
        self.attrs = dict(self.root.attrs)
        for key in ("classes", "sizes", "mean", "std", "data_sha256"):
            if key not in self.attrs:
                raise ConfigError(f"{self.path}: prepared store lacks attribute '{key}'; rerun `dvc repro prepare`.")

    def __reduce__(self):
        """Pickled (for a worker process, laya.core.parallel) as its path: the receiver reopens it."""
        return (PreparedData, (str(self.path),))

    @property
    def classes(self) -> list[str]:
        return list(self.attrs["classes"])

    def num_samples(self, split: str) -> int:
        return int(self.attrs["sizes"][split])

    def images(self, split: str, start: int = 0, stop: int | None = None) -> np.ndarray:
        return self.root[f"{split}/images"][start:stop]

    def labels(self, split: str, start: int = 0, stop: int | None = None) -> np.ndarray:
        return self.root[f"{split}/labels"][start:stop]

    def index(self, split: str, start: int = 0, stop: int | None = None) -> np.ndarray:
        """Each sample's row in the raw dataset's own split."""
        return self.root[f"{split}/index"][start:stop]
