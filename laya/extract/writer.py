"""Whole-shard writes on one background thread.

After a shard's arrays are written, the shard is marked complete (`ShardProgress`), so a killed run resumes from
the completed shards and rewrites only the ones it was in.
"""

from __future__ import annotations

import concurrent.futures
import os
import threading
import time
from collections.abc import Callable

import numpy as np
import zarr

from laya.extract.progress import ShardProgress
from laya.storage.shard_files import write_rows
from laya.storage.shards import ShardPlan

ShardCallback = Callable[[str, int], None]


class ShardWriter:
    """`submit(split, shard, {array_path: rows})` writes rows at the shard's offset, off the main thread.

    At most one shard is in flight: `submit` first waits for the previous one, so memory holds ≤ 2 shards
    (one being computed, one being written) whatever the dataset size.
    """

    def __init__(self, root: zarr.Group, progress: ShardProgress, plans: dict[str, ShardPlan],
                 on_shard_written: ShardCallback | None = None):
        self.root = root
        self.progress = progress
        self.plans = plans
        self.on_shard_written = on_shard_written
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="zarr-writer",
                                                           initializer=_lower_priority)
        self._pending: concurrent.futures.Future | None = None
        self._arrays: dict[str, zarr.Array] = {}  # opened once: opening reads the array's zarr.json
        self.bytes_written = 0
        self.cpu_seconds = 0.0  # CPU time the writer thread spent writing (what the writes cost the machine)

    def submit(self, split: str, shard: int, arrays: dict[str, np.ndarray]) -> None:
        self.wait()
        self._pending = self._pool.submit(self._write, split, shard, arrays)

    def wait(self) -> None:
        if self._pending is not None:
            pending, self._pending = self._pending, None
            pending.result()  # re-raises a failed write in the caller's thread

    def close(self) -> None:
        try:
            self.wait()
        finally:
            self._pool.shutdown(wait=True)

    def _write(self, split: str, shard: int, arrays: dict[str, np.ndarray]) -> None:
        started = time.thread_time()
        rows_of_shard = self.plans[split].slice(shard)
        for path, rows in arrays.items():
            assert len(rows) == rows_of_shard.stop - rows_of_shard.start, (path, len(rows), rows_of_shard)
            if path not in self._arrays:
                self._arrays[path] = self.root[path]
            write_rows(self._arrays[path], rows_of_shard, rows)
            self.bytes_written += rows.nbytes
        self.progress.mark(split, shard)
        self.cpu_seconds += time.thread_time() - started
        if self.on_shard_written is not None:
            self.on_shard_written(split, shard)


def _lower_priority() -> None:
    """Nice the writer thread so the forward pass's worker threads keep their cores (Linux: per-thread)."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
    except (AttributeError, OSError):
        pass
