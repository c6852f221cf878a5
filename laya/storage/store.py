"""Read side of a feature store: layer names and widths, labels, its fingerprint, and blocks of whole chunks (one
contiguous slice per array, kept in memory across epochs up to a budget). laya.storage.loader turns the blocks
into mini-batches.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import torch
import zarr

from laya.core.config import SPLITS, ConfigError
from laya.storage import loader, shard_files
from laya.storage.location import Location, configure_storage, is_url, storage_defaults
from laya.storage.shards import ShardPlan
from laya.storage.store_info import Fingerprint, StoreInfo
from laya.storage.zarrio import read_fast


class FeatureStore:
    """`FeatureStore.open(path)` → layers, dims, num_samples(split), labels(split), batches(...), attrs, info."""

    def __init__(self, path: Path | str, root: zarr.Group):
        self.path = path
        self.root = root
        self.attrs = dict(root.attrs)
        self.info = StoreInfo.from_attrs(self.attrs, str(path))
        self.layers: list[str] = list(self.info.layers)
        self.dims: list[int] = [int(d) for d in self.info.dims]
        self._memory_budget = 0  # bytes of decoded blocks `read_block` may keep (see `keep_in_memory`)
        self._memo: dict[tuple, tuple[list[np.ndarray], np.ndarray]] = {}
        self._memo_bytes = 0
        self._memo_lock = threading.Lock()  # a window's blocks are read side by side (laya.storage.loader)
        self._arrays: dict[str, zarr.Array] = {}  # opened once: opening reads the array's zarr.json

    @classmethod
    def open(cls, path: str | Path) -> FeatureStore:
        """Open a store on the local disk or at an fsspec URL (s3://bucket/features/vit.zarr; see
        laya.storage.location)."""
        if is_url(path):
            where = Location.of(path)
            try:
                (where / "zarr.json").read_bytes()
            except FileNotFoundError:
                raise ConfigError(f"{path}: no feature store here; build it with `python pipeline/extract.py … "
                                  f"--out {path}`.") from None
            except OSError as err:
                raise where.refused("opening the feature store", err) from None
            return cls(where.url, zarr.open_group(where.zarr_store(read_only=True), mode="r"))
        path = Path(path)
        if not (path / "zarr.json").is_file():
            raise ConfigError(f"{path}: no feature store here; run `dvc repro extract@<backbone>` to build it.")
        return cls(path, zarr.open_group(path, mode="r"))

    def __reduce__(self):
        """Pickled (for a worker process, laya.core.parallel) as its path and memory budget: the receiver reopens it."""
        return (_reopen, (str(self.path), self._memory_budget, self.fingerprint.hash, storage_defaults(self.path)))

    @property
    def fingerprint(self) -> Fingerprint:
        return self.info.fingerprint

    def check_fingerprint(self, backbone: str | None = None, **expected) -> None:
        """Raise when the cache was built from other weights/data/settings than `expected` (e.g. backbone_sha256).

        `backbone`: the name of the backbone the caller expects (the stage to rerun is `extract@<backbone>`)."""
        have = dataclasses.asdict(self.fingerprint)
        stale = {k: (have.get(k), v) for k, v in expected.items() if have.get(k) != v}
        if backbone is not None and backbone != self.info.backbone:
            stale["backbone"] = (self.info.backbone, backbone)
        if stale:
            detail = ", ".join(f"{k}: cache {got!r} vs expected {want!r}" for k, (got, want) in stale.items())
            raise ConfigError(f"{self.path}: stale feature cache ({detail}); rebuild it with "
                              f"`dvc repro extract@{backbone or self.info.backbone}`.")

    def check_built_from(self, card) -> None:
        """Refuse a cache not extracted from this backbone card (its name, weights and prepared data)."""
        self.check_fingerprint(card.name, backbone_sha256=card.weights_sha256, data_sha256=card.data_sha256)

    def _split(self, split: str) -> str:
        if split not in SPLITS:
            raise ConfigError(f"split {split!r}: unknown; valid: {list(SPLITS)}.")
        return split

    def num_samples(self, split: str) -> int:
        return int(self.info.sizes[self._split(split)])

    def shard_plan(self, split: str) -> ShardPlan:
        """The shards the split was written in (read them a shard at a time)."""
        return self.info.shard_plan(self._split(split))

    def labels(self, split: str) -> np.ndarray:
        return self.read(self.array(split, "labels"), slice(None))

    def read(self, array: zarr.Array, rows: slice) -> np.ndarray:
        """array[rows], with a damaged chunk (truncated, bad checksum) reported in one line naming the store,
        the array and the fix."""
        try:
            return shard_files.read(array, rows)  # uncompressed shards: one read each, straight into the result
        except (ValueError, RuntimeError) as err:  # zarr, zarrs: bad checksum, truncated shard
            raise ConfigError(f"{self.path}: array '{array.path}' is damaged ({str(err).splitlines()[0][:80]}); "
                              f"restore it with `dvc checkout {self.path}` or rebuild it with "
                              f"`dvc repro -f extract@{self.info.backbone}`.") from None

    def array(self, split: str, name: str) -> zarr.Array:
        """A raw array of the split, e.g. 'layers/blocks.0' or 'mlp_in_cls'."""
        key = f"{self._split(split)}/{name}"
        if key not in self._arrays:
            if key not in self.root:
                raise ConfigError(f"{self.path}: no array '{key}'; this store has layers {self.layers} "
                                  f"(mlp_io={self.info.mlp_io}).")
            self._arrays[key] = read_fast(self.root[key])
        return self._arrays[key]

    def source_rows(self, split: str) -> np.ndarray:
        """(N,) the prepared-store row each sample came from (its `index` array; 0..N−1 when the store has none)."""
        key = f"{self._split(split)}/index"
        return self.array(split, "index")[:] if key in self._arrays or key in self.root else \
            np.arange(self.num_samples(split))

    def layer_indices(self, layers: list[int] | None) -> list[int]:
        """Validate a layer subset (indices into `self.layers`); None means all."""
        if layers is None:
            return list(range(len(self.layers)))
        bad = [i for i in layers if not isinstance(i, int) or not -len(self.layers) <= i < len(self.layers)]
        if bad:
            raise ConfigError(f"layer index {bad} not in store {self.path} with {len(self.layers)} layers "
                              f"{self.layers}; use indices 0..{len(self.layers) - 1}.")
        return [i % len(self.layers) for i in layers]

    def block_rows(self, split: str) -> int:
        """Rows per read block: the largest chunk length of the layer arrays (a multiple of all of them)."""
        return max(int(self.array(split, f"layers/{n}").chunks[0]) for n in self.layers)

    def keep_in_memory(self, max_bytes: int) -> None:
        """Let `read_block` keep decoded blocks (up to `max_bytes` in all), so repeated epochs read each chunk
        from disk once. Iteration order and contents are unchanged."""
        self._memory_budget = int(max_bytes)

    def read_block(self, split: str, start: int, stop: int, layers: list[int]) -> tuple[list[np.ndarray], np.ndarray]:
        """Rows [start, stop) of the selected layers (as stored) and the labels, one slice per array."""
        key = (split, start, stop, tuple(layers))
        if key in self._memo:
            return self._memo[key]
        rows = slice(start, stop)
        block = ([self.read(self.array(split, f"layers/{self.layers[i]}"), rows) for i in layers],
                 self.read(self.array(split, "labels"), rows))
        size = sum(f.nbytes for f in block[0]) + block[1].nbytes
        with self._memo_lock:
            if self._memo_bytes + size <= self._memory_budget:
                self._memo[key] = block
                self._memo_bytes += size
        return block

    def batches(self, split: str, batch_size: int, shuffle: bool = False, seed: int = 0,
                layers: list[int] | None = None, window_blocks: int = 4,
                dtype: torch.dtype = torch.float32,
                prefetch: int = 2) -> Iterator[tuple[list[torch.Tensor], torch.Tensor]]:
        """Yield (list of (b, d_i) tensors, (b,) labels); each sample exactly once per pass (laya.storage.loader).

        shuffle: blocks in a seeded random order, rows permuted within windows of `window_blocks` blocks.
        prefetch: groups of batches read, gathered and converted ahead on a background thread, so the step's
        thread only takes them; 0 = on the caller's thread. The batches are the same either way.
        """
        return loader.batches(self, split, batch_size, shuffle, seed, self.layer_indices(layers), window_blocks,
                              dtype, prefetch)


def _reopen(path: str, memory_budget: int, fingerprint: str, storage: dict | None = None) -> FeatureStore:
    if storage:  # the parent's params `storage` options for this URL's protocol
        configure_storage({"storage": storage})
    store = FeatureStore.open(path)
    if store.fingerprint.hash != fingerprint:
        raise ConfigError(f"{path}: the feature store changed while a stage was reading it; rerun the stage.")
    store.keep_in_memory(memory_budget)
    return store
