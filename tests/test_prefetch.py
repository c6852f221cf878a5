"""Prefetching the cache's windows on a background thread changes nothing but when the work happens."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch

from conftest import write_feature_store
from laya import FeatureStore
from laya.core.config import ConfigError
from laya.storage.prefetch import Prefetch


def _threads() -> int:
    return sum(t.name == "laya-prefetch" for t in threading.enumerate())


@pytest.mark.parametrize("shuffle", [True, False])
def test_prefetched_batches_equal_inline_ones(tmp_path, shuffle):
    store = FeatureStore.open(write_feature_store(tmp_path / "s.zarr", shard_rows=32))
    store.keep_in_memory(0)  # every block is read and decoded again, on the prefetch thread
    kwargs = {"shuffle": shuffle, "seed": 3, "window_blocks": 2}
    ahead = list(store.batches("train", 50, prefetch=2, **kwargs))
    inline = list(store.batches("train", 50, prefetch=0, **kwargs))
    assert len(ahead) == len(inline) > 1
    for (fa, ya), (fi, yi) in zip(ahead, inline):
        assert torch.equal(ya, yi) and all(torch.equal(a, b) for a, b in zip(fa, fi))
    assert sorted(torch.cat([y for _, y in ahead]).tolist()) == sorted(store.labels("train").tolist())
    assert _threads() == 0


def test_leaving_early_stops_the_thread_and_errors_reach_the_consumer(tmp_path):
    store = FeatureStore.open(write_feature_store(tmp_path / "s.zarr", shard_rows=32))
    batches = store.batches("train", 10, shuffle=True, window_blocks=1)
    next(batches)
    batches.close()
    assert _threads() == 0

    def broken():
        yield 1
        raise ConfigError("store.zarr: array 'x' is damaged")

    with pytest.raises(ConfigError, match="damaged"):
        list(Prefetch(broken()))
    assert _threads() == 0


def test_prefetch_runs_ahead_of_a_slow_consumer():
    produced = []

    def producer():
        for i in range(5):
            produced.append(i)
            yield np.full(3, i)

    items = Prefetch(producer(), depth=2)
    it = iter(items)
    assert next(it)[0] == 0
    for _ in range(100):  # the thread fills the queue while the consumer holds item 0
        if len(produced) >= 3:
            break
        threading.Event().wait(0.01)
    assert len(produced) >= 3
    assert [x[0] for x in it] == [1, 2, 3, 4] and items.waited_s >= 0


def test_batches_follow_the_documented_order_whatever_the_loader_groups(tmp_path):
    """Blocks in a seeded permutation, windows of `window_blocks` blocks, rows permuted per window by the same
    generator, then cut into batches: the train stage's batches (hence its heads) depend on nothing else."""
    store = FeatureStore.open(write_feature_store(tmp_path / "s.zarr", shard_rows=32))
    rows, total = store.block_rows("train"), store.num_samples("train")
    layers = [store.array("train", f"layers/{n}")[:] for n in store.layers]
    labels = store.labels("train")
    rng = np.random.default_rng(5)
    starts = rng.permutation(np.arange(0, total, rows))
    expected = []
    for w in range(0, len(starts), 3):
        window = np.concatenate([np.arange(s, min(s + rows, total)) for s in starts[w:w + 3]])
        window = window[rng.permutation(len(window))]
        expected += [window[lo:lo + 20] for lo in range(0, len(window), 20)]
    got = list(store.batches("train", 20, shuffle=True, seed=5, window_blocks=3))
    assert len(got) == len(expected) > 8  # more than one group of batches per window
    for (feats, y), rows_of_batch in zip(got, expected):
        assert torch.equal(y, torch.from_numpy(labels[rows_of_batch].astype(np.int64)))
        assert all(f.dtype == torch.float32 and torch.equal(f, torch.from_numpy(x[rows_of_batch]).float())
                   for f, x in zip(feats, layers))
