"""What an exported cache holds — every array of a feature store (path, shape, dtype) and the store's card — and
how a feature store is rebuilt from any source of rows, one shard at a time."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import zarr

from laya.core.config import SPLITS, ConfigError
from laya.core.io import atomic_path
from laya.storage.shard_files import write_rows
from laya.storage.store import FeatureStore
from laya.storage.store_info import Fingerprint, StoreInfo
from laya.storage.zarrio import create_sample_array

ReadRows = Callable[[str, slice], np.ndarray]  # (array path, rows) → those rows


@dataclass(frozen=True)
class ArraySpec:
    path: str  # under the store root, e.g. "train/layers/blocks.0", "train/labels"
    shape: tuple[int, ...]  # (N, ...) — sample-major
    dtype: np.dtype

    @property
    def split(self) -> str:
        return self.path.split("/", 1)[0]


def store_arrays(store: FeatureStore) -> list[ArraySpec]:
    """Every array of the store: splits in order, paths sorted within a split."""
    specs = []
    for split in SPLITS:
        for name, node in sorted(store.root[split].members(max_depth=None)):
            if isinstance(node, zarr.Array):
                specs.append(ArraySpec(f"{split}/{name}", tuple(node.shape), np.dtype(node.dtype)))
    return specs


def external_card(specs: list[ArraySpec], source: str, layers: list[str] | None, classes: list[str] | None,
                  backbone: str) -> dict:
    """The card of a cache another tool wrote: `layers` (depth order) and `classes` must be given; sizes and
    widths come from its arrays. Its fingerprint says it was imported: no laya backbone card matches it."""
    if not layers or not classes:
        raise ConfigError(f"{source}: no laya card (attribute 'laya'); pass the layer names in depth order and the "
                          f"class names (convert.py import --layers … --classes …).")
    by_path = {s.path: s for s in specs}
    sizes, dims = {}, []
    for split in SPLITS:
        if f"{split}/labels" not in by_path:
            raise ConfigError(f"{source}: no array '{split}/labels'; a cache needs labels for train, val and test.")
        sizes[split] = by_path[f"{split}/labels"].shape[0]
    for name in layers:
        spec = by_path.get(f"train/layers/{name}")
        if spec is None or len(spec.shape) != 2:
            raise ConfigError(f"{source}: no (N, d) array 'train/layers/{name}'; --layers names arrays under "
                              f"<split>/layers/.")
        dims.append(int(spec.shape[1]))
    fingerprint = Fingerprint.of(backbone_sha256="imported", data_sha256="imported")
    info = StoreInfo(backbone=backbone, layers=list(layers), dims=dims, classes=list(classes), sizes=sizes,
                     fingerprint=fingerprint)
    return info.to_attrs()


def build_store(out: str | Path, card: dict, specs: list[ArraySpec], read: ReadRows, source: str,
                codec: str | None = None) -> FeatureStore:
    """A laya feature store at `out` holding `specs` (rows from `read`) and `card`, written a shard at a time under a
    temporary name and moved into place when whole. codec: the card's extract codec (lz4 if it has none)."""
    info = StoreInfo.from_attrs(card, source)
    codec = codec or info.extract.get("codec", "lz4")
    _check_rows(specs, info, source)
    with atomic_path(out) as tmp:
        root = zarr.open_group(tmp, mode="w")
        for spec in specs:
            plan = info.shard_plan(spec.split)
            array = create_sample_array(root, spec.path, plan, spec.shape[1:], spec.dtype, codec)
            for shard in plan:
                write_rows(array, plan.slice(shard), read(spec.path, plan.slice(shard)))
        root.attrs.update(info.to_attrs())
    return FeatureStore.open(out)


def _check_rows(specs: list[ArraySpec], info: StoreInfo, source: str) -> None:
    paths = {s.path for s in specs}
    for split in SPLITS:
        missing = [f"{split}/layers/{n}" for n in info.layers if f"{split}/layers/{n}" not in paths]
        if missing:
            raise ConfigError(f"{source}: the card lists layer arrays that are absent ({missing[:3]}); export the "
                              f"cache again.")
    for spec in specs:
        if spec.shape[0] != info.sizes[spec.split]:
            raise ConfigError(f"{source}: array '{spec.path}' has {spec.shape[0]} rows but split '{spec.split}' has "
                              f"{info.sizes[spec.split]}; every array of a split needs one row per sample.")
