"""Whole-shard writes on one background thread, with a progress record that makes extraction resumable.

The store under construction lives in a work folder that is not a DVC output (DVC deletes declared outputs
before rerunning a stage). After each shard's arrays are written, the shard is added to `progress.json`
(atomically), so a killed run resumes from the completed shards and rewrites only the one it was in.
"""

from __future__ import annotations

import concurrent.futures
import os
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
import zarr

from laya.io import read_json, write_json
from laya.shards import ShardPlan

ShardCallback = Callable[[str, int], None]


class ShardWriter:
    """`submit(split, shard, {array_path: rows})` writes rows at the shard's offset, off the main thread.

    At most one shard is in flight: `submit` first waits for the previous one, so memory holds ≤ 2 shards
    (one being computed, one being written) whatever the dataset size.
    """

    def __init__(self, root: zarr.Group, progress_path: Path, spec: dict, plans: dict[str, ShardPlan],
                 done: dict[str, list[int]], on_shard_written: ShardCallback | None = None):
        self.root = root
        self.progress_path = progress_path
        self.spec = spec
        self.plans = plans
        self.done = {split: sorted(shards) for split, shards in done.items()}
        self.on_shard_written = on_shard_written
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="zarr-writer",
                                                           initializer=_lower_priority)
        self._pending: concurrent.futures.Future | None = None
        self.bytes_written = 0

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
        rows_of_shard = self.plans[split].slice(shard)
        for path, rows in arrays.items():
            assert len(rows) == rows_of_shard.stop - rows_of_shard.start, (path, len(rows), rows_of_shard)
            self.root[path][rows_of_shard] = rows
            self.bytes_written += rows.nbytes
        self.done.setdefault(split, []).append(shard)
        write_json(self.progress_path, {"spec": self.spec, "done": self.done})
        if self.on_shard_written is not None:
            self.on_shard_written(split, shard)


def _lower_priority() -> None:
    """Nice the writer thread so the forward pass's worker threads keep their cores (Linux: per-thread)."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
    except (AttributeError, OSError):
        pass


def load_progress(progress_path: Path, spec: dict) -> dict[str, list[int]] | None:
    """Completed shards of an earlier run with the same spec, or None when there is nothing to resume."""
    if not progress_path.is_file():
        return None
    try:
        progress = read_json(progress_path, "extraction progress")
    except ValueError:
        return None
    if progress.get("spec") != spec:
        return None
    return {split: list(shards) for split, shards in progress.get("done", {}).items()}
