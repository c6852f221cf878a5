"""Mini-batches from a store's blocks, read chunk-wise, never sample by sample.

Shuffling permutes the order of blocks and the rows inside a window of blocks held in memory, so every sample is
visited exactly once per epoch while reads stay sequential. The blocks of a window are read side by side on
threads; groups of batches are gathered and converted ahead on a background thread (laya.storage.prefetch).
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

import numpy as np
import torch

from laya.storage.prefetch import Prefetch

BATCHES_PER_GROUP = 8  # batches handed over from the prefetch thread at a time


class BlockSource(Protocol):
    """What the loader reads (a FeatureStore): sizes and blocks of whole chunks."""

    def num_samples(self, split: str) -> int: ...

    def block_rows(self, split: str) -> int: ...

    def read_block(self, split: str, start: int, stop: int, layers: list[int]
                   ) -> tuple[list[np.ndarray], np.ndarray]: ...


def batches(store: BlockSource, split: str, batch_size: int, shuffle: bool, seed: int, layers: list[int],
            window_blocks: int, dtype: torch.dtype, prefetch: int) -> Iterator[tuple[list[torch.Tensor], torch.Tensor]]:
    """(list of (b, d_i) tensors in `dtype`, (b,) labels) of the store layers `layers` (indices), each sample once;
    prefetch > 0 prepares that many groups of batches ahead on a background thread."""
    groups = _batch_groups(store, split, batch_size, shuffle, seed, layers, window_blocks, dtype)
    for group in Prefetch(groups, prefetch) if prefetch > 0 else groups:
        yield from group


def _read_window(store: BlockSource, split: str, starts: np.ndarray, rows: int, layers: list[int]):
    """read_block of each start, side by side on threads (the reads wait on the disk with the GIL released:
    a cold window arrives in about half the time it takes one block after another)."""
    total = store.num_samples(split)
    spans = [(int(s), min(int(s) + rows, total)) for s in starts]
    if len(spans) == 1:
        return [store.read_block(split, *spans[0], layers)]
    with ThreadPoolExecutor(len(spans), thread_name_prefix="laya-read") as pool:
        return list(pool.map(lambda span: store.read_block(split, *span, layers), spans))


def _batch_groups(store: BlockSource, split: str, batch_size: int, shuffle: bool, seed: int, layers: list[int],
                  window_blocks: int, dtype: torch.dtype
                  ) -> Iterator[list[tuple[list[torch.Tensor], torch.Tensor]]]:
    """The batches, BATCHES_PER_GROUP at a time: per window of blocks its layers (n, d_i) as stored and labels,
    then per batch a row gather (shuffled) or slice (in order), converted to `dtype` (exact: float16 and
    float32 values convert without rounding, so gathering first gives the same numbers)."""
    total, rows = store.num_samples(split), store.block_rows(split)
    starts = np.arange(0, total, rows)
    rng = np.random.default_rng(seed)
    if shuffle:
        starts = rng.permutation(starts)
    for w in range(0, len(starts), window_blocks):
        blocks = _read_window(store, split, starts[w:w + window_blocks], rows, layers)
        feats = [torch.from_numpy(np.concatenate([b[0][j] for b in blocks])) for j in range(len(layers))]
        labels = torch.from_numpy(np.concatenate([b[1] for b in blocks]).astype(np.int64))
        order = torch.from_numpy(rng.permutation(len(labels))) if shuffle else None
        step = batch_size * BATCHES_PER_GROUP
        for group in range(0, len(labels), step):
            yield [_batch(feats, labels, order, lo, lo + batch_size, dtype)
                   for lo in range(group, min(group + step, len(labels)), batch_size)]


def _batch(feats: list[torch.Tensor], labels: torch.Tensor, order: torch.Tensor | None, lo: int, hi: int,
           dtype: torch.dtype) -> tuple[list[torch.Tensor], torch.Tensor]:
    """Rows [lo, hi) of a window, in `order` when given: ([(b, d_i) in dtype], (b,) labels)."""
    if order is None:
        return [f[lo:hi].to(dtype) for f in feats], labels[lo:hi]
    pick = order[lo:hi]
    return [f.index_select(0, pick).to(dtype) for f in feats], labels.index_select(0, pick)
