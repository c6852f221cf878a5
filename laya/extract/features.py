"""Extraction: prepared images → frozen backbone → per-layer activations in a sharded Zarr feature store.

Store layout (`<backbone>.zarr`), for each split in train/val/test:
  `<split>/layers/<layer>` (N, d_i) · `<split>/labels` (N,) int32 · `<split>/index` (N,) int64 (prepared row)
  ViTs with `mlp_io`: `<split>/mlp_in_cls`, `<split>/mlp_out_cls` (N, L, d) and `<split>/mlp_in_patch`,
  `<split>/mlp_out_patch` (N, P, L, d) with `<split>/patch_index` (N, P) (which patch tokens were kept).
Root attrs: layers, dims, classes, sizes, the params used and the `fingerprint` later stages check.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import torch
import zarr
from tqdm import tqdm

import laya
from laya.backbones import BackboneCard
from laya.config import ConfigError
from laya.data import SPLITS, PreparedData
from laya.extract.config import ExtractConfig
from laya.extract.taps import LayerTap
from laya.extract.writer import ShardCallback, ShardWriter, load_progress
from laya.images import Preprocess
from laya.io import human_bytes, replace_path, require_free_space
from laya.shards import ShardPlan
from laya.store_info import Fingerprint, StoreInfo
from laya.zarrio import create_sample_array


def fingerprint(card: BackboneCard, data_sha256: str, cfg: ExtractConfig, mlp_io: bool) -> Fingerprint:
    """What the cached values depend on; `hash` summarises it for quick comparison by later stages.
    `card.weights_sha256` is the hash of the weights file actually loaded (`load_backbone` checks it)."""
    return Fingerprint.of(backbone_sha256=card.weights_sha256, data_sha256=data_sha256, pooling=cfg.pooling,
                          dtype=cfg.dtype, mlp_io=mlp_io, patch_tokens=cfg.patch_tokens if mlp_io else None,
                          seed=cfg.seed, laya_version=laya.__version__)


def default_work_dir(out: Path) -> Path:
    """Where a store is built before it is complete: beside the output, not inside it (DVC deletes outputs)."""
    return out.parent / ".partial"


class _Layout:
    """Array shapes of one store, found by running the tap on a single image."""

    def __init__(self, tap: LayerTap, prep: Preprocess, data: PreparedData, cfg: ExtractConfig, device):
        probe = tap(prep(torch.from_numpy(data.images("train", 0, 1)).to(device)))
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

    def arrays(self, names: list[str], dtype: str) -> dict[str, tuple[tuple[int, ...], str]]:
        """{relative array path: (row shape, dtype)}."""
        spec = {f"layers/{n}": ((d,), dtype) for n, d in zip(names, self.dims)}
        spec.update({"labels": ((), "int32"), "index": ((), "int64")})
        if self.mlp_io:
            cls_shape, patch_shape = (self.num_blocks, self.block_dim), (self.keep, self.num_blocks, self.block_dim)
            spec.update({"mlp_in_cls": (cls_shape, dtype), "mlp_out_cls": (cls_shape, dtype),
                         "mlp_in_patch": (patch_shape, dtype), "mlp_out_patch": (patch_shape, dtype),
                         "patch_index": ((self.keep,), "int16")})
        return spec


def _row_bytes(arrays: dict[str, tuple[tuple[int, ...], str]]) -> int:
    """Uncompressed bytes of one sample across every array of a store."""
    return sum(int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize for shape, dtype in arrays.values())


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


def _compute_shard(tap, prep, layout, data, cfg, names, split, plan: ShardPlan, shard: int,
                   device) -> dict[str, np.ndarray]:
    """Forward one shard's images batch by batch into preallocated storage-dtype buffers."""
    rows = plan.slice(shard)
    n, dtype = plan.rows(shard), getattr(torch, cfg.dtype)
    images = data.images(split, rows.start, rows.stop)
    out = {f"layers/{name}": torch.empty((n, d), dtype=dtype) for name, d in zip(names, layout.dims)}
    if layout.mlp_io:
        picks = patch_sample(cfg.seed, split, shard, n, layout.num_patches, layout.keep)
        # token positions kept per image: the CLS token, then the sampled patches (after the prefix tokens)
        keep = torch.from_numpy(np.concatenate([np.zeros((n, 1)), picks + layout.prefix], 1).astype(np.int64))
        for key in ("mlp_in", "mlp_out"):
            out[f"{key}_cls"] = torch.empty((n, layout.num_blocks, layout.block_dim), dtype=dtype)
            out[f"{key}_patch"] = torch.empty((n, layout.keep, layout.num_blocks, layout.block_dim), dtype=dtype)
    for lo in range(0, n, cfg.batch_size):
        hi = min(lo + cfg.batch_size, n)
        tokens = keep[lo:hi].to(device) if layout.mlp_io else None
        tapped = tap(prep(torch.from_numpy(images[lo:hi]).to(device)), tokens)
        for name, layer in zip(names, tapped.layers):
            out[f"layers/{name}"][lo:hi].copy_(layer)  # casts to the storage dtype in the copy
        if layout.mlp_io:
            for key, kept in (("mlp_in", tapped.mlp_in), ("mlp_out", tapped.mlp_out)):  # (b, 1 + P, L, d)
                out[f"{key}_cls"][lo:hi].copy_(kept[:, 0])
                out[f"{key}_patch"][lo:hi].copy_(kept[:, 1:])
    for path, buffer in out.items():
        if _overflowed(buffer):
            raise ConfigError(f"extract.dtype={cfg.dtype}: {split} shard {shard} of '{path}' overflows to inf/nan; "
                              f"set extract.dtype: float32.")
    arrays = {path: buffer.numpy() for path, buffer in out.items()}
    arrays["labels"] = data.labels(split, rows.start, rows.stop)
    arrays["index"] = data.index(split, rows.start, rows.stop)
    if layout.mlp_io:
        arrays["patch_index"] = picks
    return arrays


def extract_features(model: torch.nn.Module, card: BackboneCard, data: PreparedData, out: str | Path,
                     cfg: ExtractConfig, device: torch.device, work_dir: Path | None = None,
                     on_shard_written: ShardCallback | None = None) -> dict:
    """Build the feature store at `out` (resuming an interrupted build of the same spec). Returns a summary."""
    out = Path(out)
    if cfg.mlp_io == "auto":  # the stage resolves it per backbone (ExtractConfig.for_backbone); here: when possible
        cfg = replace(cfg, mlp_io=True)
    work_dir = work_dir or default_work_dir(out)
    partial, progress_path = work_dir / out.name, work_dir / f"{out.name}.progress.json"
    model.to(device)
    prep = card.preprocess().to(device)
    tap = LayerTap(model, cfg.pooling, hook_layers=card.config.layers, mlp_io=cfg.mlp_io)
    layout = _Layout(tap, prep, data, cfg, device)
    names = tap.names
    fp = fingerprint(card, data.attrs["data_sha256"], cfg, layout.mlp_io)
    plans = {s: ShardPlan(data.num_samples(s), cfg.shard_size) for s in SPLITS}
    spec = {"fingerprint": asdict(fp), "config": asdict(cfg), "sizes": {s: plans[s].num_rows for s in SPLITS}}
    done = load_progress(progress_path, spec) if (partial / "zarr.json").is_file() else None
    if done is None:
        shutil.rmtree(partial, ignore_errors=True)
        info = StoreInfo(backbone=card.name, layers=names, dims=layout.dims, classes=data.classes,
                         sizes=spec["sizes"], fingerprint=fp, mlp_io=layout.mlp_io, num_patches=layout.num_patches,
                         patch_tokens_kept=layout.keep, prefix_tokens=layout.prefix, extract=asdict(cfg))
        root = _create_store(partial, layout.arrays(names, cfg.dtype), plans, cfg.codec, info)
        done = {}
    else:
        root = zarr.open_group(partial, mode="r+")
    todo = {s: [i for i in plans[s] if i not in done.get(s, [])] for s in SPLITS}
    needed = _row_bytes(layout.arrays(names, cfg.dtype)) * sum(plans[s].rows_in(todo[s]) for s in SPLITS)
    print(f"extract@{card.name}: {sum(p.num_rows for p in plans.values())} samples × {len(names)} layers"
          f"{' + MLP inputs/outputs' if layout.mlp_io else ''} → {out} (up to {human_bytes(needed)} uncompressed "
          f"still to write, {sum(len(t) for t in todo.values())} shards)", flush=True)
    require_free_space(work_dir, needed, f"extract@{card.name}", "free space, or lower extract.patch_tokens / "
                       "set extract.mlp_io: false / extract.dtype: float16")
    started = time.perf_counter()
    writer = ShardWriter(root, progress_path, spec, plans, done, on_shard_written)
    try:
        for split in SPLITS:
            plan = plans[split]
            bar = tqdm(total=plan.num_rows, initial=plan.num_rows - plan.rows_in(todo[split]),
                       desc=f"extract@{card.name} {split}", unit="img")
            for shard in todo[split]:
                arrays = _compute_shard(tap, prep, layout, data, cfg, names, split, plan, shard, device)
                writer.submit(split, shard, {f"{split}/{k}": v for k, v in arrays.items()})
                bar.update(len(arrays["labels"]))
            bar.close()
    finally:
        writer.close()
    progress_path.unlink()
    replace_path(partial, out)
    files = [p for p in out.rglob("*") if p.is_file()]
    return {"path": str(out), "layers": names, "dims": layout.dims, "files": len(files),
            "bytes": sum(p.stat().st_size for p in files), "raw_bytes_written": writer.bytes_written,
            "seconds": time.perf_counter() - started, "resumed_shards": sum(len(v) for v in done.values()),
            "fingerprint": fp.hash}


def _create_store(path: Path, arrays: dict, plans: dict[str, ShardPlan], codec: str, info: StoreInfo) -> zarr.Group:
    path.parent.mkdir(parents=True, exist_ok=True)
    root = zarr.open_group(path, mode="w")
    for split in SPLITS:
        for rel, (row_shape, dtype) in arrays.items():
            create_sample_array(root, f"{split}/{rel}", plans[split], row_shape, dtype, codec)
    root.attrs.update(info.to_attrs())
    return root
