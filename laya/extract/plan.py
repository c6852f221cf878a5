"""What an extraction will write, before it writes anything: array shapes, bytes, shards and who writes which.

`Layout` runs the tap on one input to learn the arrays' shapes; `ExtractionPlan` turns it and the split sizes
into arrays (row shape, dtype), shards per split, bytes and the (split, shard) tasks, dealt to ranks whole.
The same plan is printed before every extraction and by benchmarks/extract_plan.py for datasets not on disk.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import torch

from laya.core.config import SPLITS, ConfigError
from laya.core.io import human_bytes
from laya.core.parallel import available_cores
from laya.extract.config import ExtractConfig
from laya.extract.taps import LayerTap
from laya.storage.shards import ShardPlan

Task = tuple[str, int]  # (split, shard index)
Arrays = dict[str, tuple[tuple[int, ...], str]]  # relative array path → (row shape, dtype)


class Layout:
    """Array shapes of one store, found by running the tap on a single preprocessed input (1, C, H, W)."""

    def __init__(self, tap: LayerTap, probe_input: torch.Tensor, cfg: ExtractConfig):
        probe = tap(probe_input)
        self.names = tap.names
        self.dims = [int(t.shape[1]) for t in probe.layers]
        self.prefix = tap.prefix
        self.mlp_io = probe.mlp_in is not None
        self.num_patches = 0 if not self.mlp_io else int(probe.mlp_in.shape[1]) - tap.prefix
        self.keep = (self.num_patches if cfg.patch_tokens == "all" else int(cfg.patch_tokens)) if self.mlp_io else 0
        if self.mlp_io and self.keep > self.num_patches:
            raise ConfigError(f"extract.patch_tokens: {cfg.patch_tokens} > the {self.num_patches} patch tokens "
                              f"of this ViT; use at most {self.num_patches} or \"all\".")
        self.block_dim = int(probe.mlp_in.shape[-1]) if self.mlp_io else 0
        self.num_blocks = int(probe.mlp_in.shape[2]) if self.mlp_io else 0

    def arrays(self, dtype: str) -> Arrays:
        spec = {f"layers/{n}": ((d,), dtype) for n, d in zip(self.names, self.dims)}
        spec.update({"labels": ((), "int32"), "index": ((), "int64")})
        if self.mlp_io:
            cls_shape, patch_shape = (self.num_blocks, self.block_dim), (self.keep, self.num_blocks, self.block_dim)
            spec.update({"mlp_in_cls": (cls_shape, dtype), "mlp_out_cls": (cls_shape, dtype),
                         "mlp_in_patch": (patch_shape, dtype), "mlp_out_patch": (patch_shape, dtype),
                         "patch_index": ((self.keep,), "int16")})
        return spec


def check_world(world: int, sizes: dict[str, int], shard_size: int) -> None:
    """Every process must own at least one whole shard (a shard is written by one process only)."""
    total = sum(ShardPlan(int(n), shard_size).count for n in sizes.values())
    if world > total:
        raise ConfigError(f"extract: {world} processes but the store has only {total} shards of {shard_size} "
                          f"samples; use at most {total} processes (extract.procs, or torchrun's nproc-per-node × "
                          f"nnodes) or a smaller extract.shard_size.")


def resolve_procs(procs: int | str, device: torch.device, sizes: dict[str, int], shard_size: int) -> int:
    """`extract.procs: auto` → one process per core on CPU (each computes with one thread), 1 on CUDA, never more
    than the shards; an integer as given."""
    if procs != "auto":
        return int(procs)
    if device.type == "cuda":
        return 1
    shards = sum(ShardPlan(int(n), shard_size).count for n in sizes.values())
    return max(1, min(available_cores(), shards))


def row_bytes(arrays: Arrays) -> int:
    """Uncompressed bytes of one sample across the given arrays."""
    return sum(int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize for shape, dtype in arrays.values())


@dataclass(frozen=True)
class ExtractionPlan:
    layout: Layout
    sizes: dict[str, int]  # samples per split
    cfg: ExtractConfig
    world: int = 1  # processes writing

    @property
    def arrays(self) -> Arrays:
        return self.layout.arrays(self.cfg.dtype)

    @cached_property
    def shards(self) -> dict[str, ShardPlan]:
        return {s: ShardPlan(int(self.sizes[s]), self.cfg.shard_size) for s in SPLITS}

    def tasks(self, done: dict[str, list[int]] | None = None) -> list[Task]:
        """Every (split, shard) not in `done`, split by split in shard order."""
        done = done or {}
        return [(s, i) for s, plan in self.shards.items() for i in plan if i not in done.get(s, ())]

    def bytes(self, tasks: list[Task] | None = None, arrays: Arrays | None = None) -> int:
        """Uncompressed bytes the tasks write (all of them by default), over `arrays` (all by default)."""
        tasks = self.tasks() if tasks is None else tasks
        rows = sum(self.shards[s].rows(i) for s, i in tasks)
        return row_bytes(self.arrays if arrays is None else arrays) * rows

    def check_world(self) -> None:
        check_world(self.world, self.sizes, self.cfg.shard_size)

    def describe(self, todo: list[Task] | None = None) -> str:
        """Samples, layers, token arrays, bytes, shards and shards per process, in three lines."""
        todo = self.tasks() if todo is None else todo
        lay = self.layout
        total = sum(self.sizes[s] for s in SPLITS)
        splits = " · ".join(f"{s} {self.sizes[s]:,}" for s in SPLITS)
        widths = sorted(set(lay.dims))
        lines = [f"{total:,} samples ({splits}) × {len(lay.dims)} layers of width "
                 f"{'/'.join(map(str, widths))} ({self.cfg.pooling} pooling)"]
        if lay.mlp_io:
            tokens = self.layout.arrays(self.cfg.dtype)
            token_arrays = {k: v for k, v in tokens.items() if k.startswith("mlp_")}
            lines.append(f"+ {len(token_arrays)} token arrays: each block's MLP input and output for the CLS token "
                         f"and {lay.keep} of {lay.num_patches} patch tokens ({lay.num_blocks} blocks × "
                         f"{lay.block_dim}), {human_bytes(self.bytes(arrays=token_arrays))} of the total")
        per_rank = [len(todo[r::self.world]) for r in range(self.world)]
        ranks = (f", {min(per_rank)}–{max(per_rank)} per process on {self.world}" if self.world > 1 and
                 min(per_rank) != max(per_rank) else f", {per_rank[0]} per process on {self.world}"
                 if self.world > 1 else "")
        packing = "uncompressed" if self.cfg.codec == "none" else f"before {self.cfg.codec} compression"
        lines.append(f"up to {human_bytes(self.bytes())} on disk ({self.cfg.dtype}, {packing}) in "
                     f"{len(self.tasks())} shards of {self.cfg.shard_size:,} samples; "
                     f"{len(todo)} to write ({human_bytes(self.bytes(todo))}){ranks}")
        return "\n  ".join(lines)
