"""Extraction: prepared images → frozen backbone → per-layer activations in a sharded Zarr feature store.

Store layout (`<backbone>.zarr`), for each split in train/val/test:
  `<split>/layers/<layer>` (N, d_i) · `<split>/labels` (N,) int32 · `<split>/index` (N,) int64 (prepared row)
  ViTs with `mlp_io`: `<split>/mlp_in_cls`, `<split>/mlp_out_cls` (N, L, d) and `<split>/mlp_in_patch`,
  `<split>/mlp_out_patch` (N, P, L, d) with `<split>/patch_index` (N, P) (which patch tokens were kept).
Root attrs: layers, dims, classes, sizes, the params used and the `fingerprint` later stages check.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch
import zarr
from tqdm import tqdm

import laya
from laya.backbones import BackboneCard
from laya.core.config import ConfigError
from laya.core.distributed import Ranks
from laya.core.io import require_free_space
from laya.core.parallel import one_thread
from laya.data import SPLITS, PreparedData
from laya.extract.config import ExtractConfig
from laya.extract.loader import block_rows, image_loader
from laya.extract.plan import ExtractionPlan, Layout, Task
from laya.extract.progress import ShardProgress
from laya.extract.taps import LayerTap
from laya.extract.writer import ShardCallback, ShardWriter
from laya.storage.location import Location
from laya.storage.store_info import Fingerprint, StoreInfo
from laya.storage.zarrio import create_sample_array


def fingerprint(card: BackboneCard, data_sha256: str, cfg: ExtractConfig, mlp_io: bool) -> Fingerprint:
    """What the cached values depend on; `hash` summarises it for quick comparison by later stages.
    `card.weights_sha256` is the hash of the weights file actually loaded (`load_backbone` checks it)."""
    return Fingerprint.of(backbone_sha256=card.weights_sha256, data_sha256=data_sha256, pooling=cfg.pooling,
                          dtype=cfg.dtype, mlp_io=mlp_io, patch_tokens=cfg.patch_tokens if mlp_io else None,
                          seed=cfg.seed, laya_version=laya.__version__, autocast=cfg.autocast)


def default_work_dir(out: Location) -> Location:
    """Where a store is built before it is complete: beside the output, not inside it (DVC deletes outputs)."""
    return out.parent / ".partial"


def patch_sample(seed: int, split: str, shard: int, rows: int, num_patches: int, keep: int) -> np.ndarray:
    """(rows, keep) sorted patch positions per image, seeded by (seed, split, shard) so a resumed run agrees."""
    if keep == num_patches:
        return np.broadcast_to(np.arange(num_patches, dtype=np.int16), (rows, keep)).copy()
    rng = np.random.default_rng([seed, SPLITS.index(split), shard])
    return np.sort(np.argsort(rng.random((rows, num_patches)), axis=1)[:, :keep], axis=1).astype(np.int16)


def _overflowed(buffer: torch.Tensor) -> bool:
    """True if a float buffer holds inf/nan. float16: some |x| has all exponent bits set (one integer pass)."""
    if buffer.dtype != torch.float16:
        return not bool(torch.isfinite(buffer).all())
    return bool((buffer.numpy().view(np.uint16) & 0x7FFF).max(initial=0) >= 0x7C00)


class ShardBuffers:
    """One shard's activations, filled block by block in preallocated storage-dtype buffers (CPU memory)."""

    def __init__(self, plan: ExtractionPlan, data: PreparedData, split: str, shard: int):
        self.plan, self.split, self.shard = plan, split, shard
        self.rows = plan.shards[split].slice(shard)
        n, lay, dtype = plan.shards[split].rows(shard), plan.layout, getattr(torch, plan.cfg.dtype)
        self.out = {f"layers/{name}": torch.empty((n, d), dtype=dtype) for name, d in zip(lay.names, lay.dims)}
        self.keep = None
        if lay.mlp_io:
            self.picks = patch_sample(plan.cfg.seed, split, shard, n, lay.num_patches, lay.keep)
            # token positions kept per image: the CLS token, then the sampled patches (after the prefix tokens)
            self.keep = torch.from_numpy(np.concatenate([np.zeros((n, 1)), self.picks + lay.prefix], 1)
                                         .astype(np.int64))
            for key in ("mlp_in", "mlp_out"):
                self.out[f"{key}_cls"] = torch.empty((n, lay.num_blocks, lay.block_dim), dtype=dtype)
                self.out[f"{key}_patch"] = torch.empty((n, lay.keep, lay.num_blocks, lay.block_dim), dtype=dtype)
        self.data = data

    def fill(self, tap: LayerTap, prep, lo: int, images: torch.Tensor, device: torch.device) -> None:
        """Forward the block of images that starts at row `lo` of the shard, in batches of extract.batch_size."""
        cfg = self.plan.cfg
        for b in range(0, len(images), cfg.batch_size):
            first, last = lo + b, lo + min(b + cfg.batch_size, len(images))
            sink = self._token_sink(first, last, device) if self.keep is not None else None
            with cfg.autocast_context(device):
                tapped = tap(prep(images[b:b + cfg.batch_size].to(device, non_blocking=True)), sink=sink)
            for name, layer in zip(self.plan.layout.names, tapped.layers):
                self.out[f"layers/{name}"][first:last].copy_(layer)  # casts to the storage dtype in the copy

    def _token_sink(self, first: int, last: int, device: torch.device):
        """Block sink for rows first:last: the CLS token (b, d) and the kept patches (b, P, d) of each block's MLP
        input and output, copied straight into the storage-dtype buffers' block column (one cast, no stacking)."""
        patches = self.keep[first:last, 1:].to(device)  # (b, P) token positions
        rows = torch.arange(last - first, device=device)[:, None]

        def sink(block: int, mlp_in: torch.Tensor, mlp_out: torch.Tensor) -> None:  # (b, N, d) each
            for key, tokens in (("mlp_in", mlp_in), ("mlp_out", mlp_out)):
                self.out[f"{key}_cls"][first:last, block].copy_(tokens[:, 0])
                self.out[f"{key}_patch"][first:last, :, block].copy_(tokens[rows, patches])
        return sink

    def finish(self) -> dict[str, np.ndarray]:
        """{array path under the split: rows}, after checking the storage dtype held every value."""
        for path, buffer in self.out.items():
            if _overflowed(buffer):
                raise ConfigError(f"extract.dtype={self.plan.cfg.dtype}: {self.split} shard {self.shard} of "
                                  f"'{path}' overflows to inf/nan; set extract.dtype: float32.")
        arrays = {path: buffer.numpy() for path, buffer in self.out.items()}
        arrays["labels"] = self.data.labels(self.split, self.rows.start, self.rows.stop)
        arrays["index"] = self.data.index(self.split, self.rows.start, self.rows.stop)
        if self.keep is not None:
            arrays["patch_index"] = self.picks
        return {f"{self.split}/{k}": v for k, v in arrays.items()}


def extract_features(model: torch.nn.Module, card: BackboneCard, data: PreparedData, out: str | Path | Location,
                     cfg: ExtractConfig, device: torch.device, work_dir: str | Path | Location | None = None,
                     on_shard_written: ShardCallback | None = None, ranks: Ranks | None = None) -> dict:
    """Build the feature store at `out` (resuming an interrupted build of the same spec). Returns a summary.

    Under torchrun every rank calls this: rank 0 creates (or resumes) the store, each rank computes and writes
    the whole shards `ranks.mine` gives it, and rank 0 moves the finished store into place after all are done.
    `out` and `work_dir` may be fsspec URLs (s3://…): the store is then built and resumed on the object store."""
    out, ranks = Location.of(out), ranks or Ranks()
    cfg.check_device(device)
    if cfg.mlp_io == "auto":  # the stage resolves it per backbone (ExtractConfig.for_backbone); here: when possible
        cfg = replace(cfg, mlp_io=True)
    work_dir = Location.of(work_dir) if work_dir is not None else default_work_dir(out)
    partial, progress = work_dir / out.name, ShardProgress(work_dir / f"{out.name}.progress")
    model.to(device)
    prep = card.preprocess().to(device)
    tap = LayerTap(model, cfg.pooling, hook_layers=card.config.layers, mlp_io=cfg.mlp_io)
    with one_thread():
        layout = Layout(tap, prep(torch.from_numpy(data.images("train", 0, 1)).to(device)), cfg)
    fp = fingerprint(card, data.attrs["data_sha256"], cfg, layout.mlp_io)
    plan = ExtractionPlan(layout, {s: data.num_samples(s) for s in SPLITS}, cfg, ranks.world)
    plan.check_world()
    spec = {"fingerprint": fp.to_attrs(), "config": cfg.recorded(), "sizes": plan.sizes}
    if ranks.is_main:
        _start_or_resume(partial, progress, spec, plan, card, data, fp, work_dir, out)
    ranks.barrier()  # the store exists before any rank writes to it
    done = progress.done(spec) or {}
    ranks.barrier()  # every rank read the same completed shards before any rank marks a new one
    todo = plan.tasks(done)
    mine = ranks.mine(todo)
    started = time.perf_counter()
    writer = ShardWriter(zarr.open_group(partial.zarr_store(read_only=False), mode="r+"), progress, plan.shards,
                         on_shard_written)
    try:
        with one_thread():  # the same bits for any process count (float reductions split over threads differ)
            _compute(tap, prep, plan, data, mine, writer, device, card.name, ranks)
    finally:
        writer.close()
    ranks.barrier()  # every shard is written
    if ranks.is_main:
        missing = plan.tasks(progress.done(spec) or {})
        if missing:
            raise ConfigError(f"{partial}: shards {missing[:4]} were not written; rerun to complete them.")
        progress.remove()
        partial.move_to(out)
    ranks.barrier()  # the store is in place before any rank returns
    files, size = out.usage()
    return {"path": str(out), "layers": layout.names, "dims": layout.dims, "files": files,
            "bytes": size, "raw_bytes_written": plan.bytes(todo), "write_cpu_seconds": writer.cpu_seconds,
            "seconds": time.perf_counter() - started, "resumed_shards": sum(len(v) for v in done.values()),
            "fingerprint": fp.hash, "shards_written_here": len(mine)}


def _start_or_resume(partial: Location, progress: ShardProgress, spec: dict, plan: ExtractionPlan, card, data,
                     fp, work_dir: Location, out: Location) -> None:
    """Rank 0: keep an interrupted build of the same spec, or start an empty store; print the plan; check space
    (a local disk) or that the bucket exists and takes our writes (an object store)."""
    out.check_writable(f"extract@{card.name}")
    work_dir.check_writable(f"extract@{card.name}")
    if not ((partial / "zarr.json").exists() and progress.done(spec) is not None):
        partial.remove()
        progress.start(spec)
        lay = plan.layout
        info = StoreInfo(backbone=card.name, layers=lay.names, dims=lay.dims, classes=data.classes,
                         sizes=plan.sizes, fingerprint=fp, mlp_io=lay.mlp_io, num_patches=lay.num_patches,
                         patch_tokens_kept=lay.keep, prefix_tokens=lay.prefix, extract=plan.cfg.recorded())
        _create_store(partial, plan, info)
    todo = plan.tasks(progress.done(spec))
    print(f"extract@{card.name} → {out}: {plan.describe(todo)}", flush=True)
    if not work_dir.remote:  # an object store reports no free space to check
        require_free_space(work_dir.local, plan.bytes(todo), f"extract@{card.name}", "free space, or lower "
                           "extract.patch_tokens / set extract.mlp_io: false / extract.dtype: float16")


def _compute(tap, prep, plan: ExtractionPlan, data: PreparedData, tasks: list[Task], writer: ShardWriter,
             device: torch.device, name: str, ranks: Ranks) -> None:
    """Forward this rank's shards block by block; each finished shard goes to the writer thread."""
    rows = block_rows(data, plan.cfg.batch_size, plan.cfg.shard_size)
    loader = image_loader(data, plan.shards, tasks, rows, device, ranks.local_world)
    bar = tqdm(total=sum(plan.shards[s].rows(i) for s, i in tasks), unit="img", disable=not ranks.is_main,
               desc=f"extract@{name}" + (f" rank 0 of {ranks.world}" if ranks.distributed else ""))
    shard = None
    for split, index, lo, images in loader:
        if shard is None or (shard.split, shard.shard) != (split, index):
            if shard is not None:
                writer.submit(shard.split, shard.shard, shard.finish())
            shard = ShardBuffers(plan, data, split, index)
        shard.fill(tap, prep, lo, images, device)
        bar.update(len(images))
    if shard is not None:
        writer.submit(shard.split, shard.shard, shard.finish())
    bar.close()


def _create_store(path: Location, plan: ExtractionPlan, info: StoreInfo) -> zarr.Group:
    path.parent.makedirs()
    root = zarr.open_group(path.zarr_store(read_only=False), mode="w")
    for split, shards in plan.shards.items():
        for rel, (row_shape, dtype) in plan.arrays.items():
            create_sample_array(root, f"{split}/{rel}", shards, row_shape, dtype, plan.cfg.codec)
    root.attrs.update(info.to_attrs())
    return root
