"""The extraction's input pipeline: a process's shards of prepared images, read a block at a time by a DataLoader.

A block is a run of `block_rows` images of one shard (a multiple of the forward batch that spans whole chunks of
the prepared store, so no chunk is decoded twice). On CUDA, DataLoader workers read and pin the next blocks while
the GPU runs the current one; on CPU the forward pass has every core, so blocks are read in this process.
"""

from __future__ import annotations

import math

import torch
from torch.utils.data import DataLoader, Dataset

from laya.core.parallel import available_cores
from laya.data import SPLITS, PreparedData
from laya.extract.plan import Task
from laya.storage.shards import ShardPlan

Block = tuple[str, int, int, torch.Tensor]  # (split, shard, first row within the shard, uint8 images)


def block_rows(data: PreparedData, batch_size: int, shard_size: int) -> int:
    """Rows per read: the smallest multiple of `batch_size` covering a chunk of the prepared images, ≤ a shard
    (a class subset of the data gathers its rows from a split held in memory: one batch)."""
    chunk = batch_size
    if isinstance(data, PreparedData):
        chunk = max(int(data.root[f"{split}/images"].chunks[0]) for split in SPLITS)
    return min(batch_size * math.ceil(chunk / batch_size), max(batch_size, shard_size))


class ImageBlocks(Dataset):
    """Item i: block i of the given tasks' shards, in task order then row order."""

    def __init__(self, data: PreparedData, shards: dict[str, ShardPlan], tasks: list[Task], rows: int):
        self.data = data
        self.shards = shards
        self.blocks = [(split, shard, lo, min(lo + rows, shards[split].rows(shard)))
                       for split, shard in tasks for lo in range(0, shards[split].rows(shard), rows)]

    def __len__(self) -> int:
        return len(self.blocks)

    def __getitem__(self, i: int) -> Block:
        split, shard, lo, hi = self.blocks[i]
        start = self.shards[split].start(shard)
        return split, shard, lo, torch.from_numpy(self.data.images(split, start + lo, start + hi))


def image_loader(data: PreparedData, shards: dict[str, ShardPlan], tasks: list[Task], rows: int,
                 device: torch.device, procs_per_node: int = 1) -> DataLoader:
    """Blocks of the tasks in order; on CUDA read by up to 4 worker processes per rank into pinned memory."""
    cuda = device.type == "cuda"
    workers = min(4, max(1, available_cores() // max(1, procs_per_node) - 1)) if cuda else 0
    return DataLoader(ImageBlocks(data, shards, tasks, rows), batch_size=None, shuffle=False, num_workers=workers,
                      pin_memory=cuda, multiprocessing_context="spawn" if workers else None,
                      persistent_workers=False)
