"""The feature store's I/O beside the layouts other tools use, side by side in one run on the same activations:

  laya        laya's store (Zarr v3, sharded; params extract.codec), written a shard at a time as extraction writes
              it (laya.storage.shard_files.write_rows) and read as FeatureStore reads it (uncompressed shards straight
              from the files, laya.storage.shard_files.read_rows; compressed ones through zarrs,
              laya.storage.zarrio.read_fast)
  laya-lz4    the same, codec lz4 (the default until the whole-shard writer and reader)
  zarr-python the lz4 store written and read by zarr-python alone (laya's store before either)
  h5py        one HDF5 file, chunked like laya's store, no compression
  h5py-clt    crosslayer-coding's layout: HDF5 files of 2^16 rows, datasets layer_<l>/inputs and layer_<l>/targets
  memmap      raw .bin files read with np.memmap (saev's layout)
  arrow       an Arrow IPC file, one fixed-size-list column per layer and side, memory-mapped (SAELens caches Arrow)

Columns: write MB/s; sequential and shuffled-block read MB/s (blocks of --block rows, hot page cache, each block
materialised as a (rows, L, d) array per side); size on disk; files. The best of --rounds interleaved rounds.

The activations: the ViT's MLP inputs and outputs at every block for the CLS and the kept patch tokens of the
training split (data/features/vit.zarr — the transcoders' data): (T, L, d) per side, T = images × (1 + patches).

Then the training loader: a LAYA epoch on data/features/vit.zarr with train.memory_mb: 0 (every block decoded
from the store, its files evicted from the page cache first), with prefetch (the default) and without, one torch
thread as the train stage trains: the seconds the step waited on the cache.

    python benchmarks/store.py [--features data/features/vit.zarr] [--block 8192] [--rounds 2]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import h5py
import numpy as np
import pyarrow as pa
import torch
import zarr
from torch import nn

from laya.core.config import section
from laya.core.parallel import one_thread
from laya.core.params import load_params
from laya.heads import build
from laya.settings import resolve
from laya.storage import shard_files
from laya.storage.shard_files import write_rows
from laya.storage.shards import ShardPlan
from laya.storage.store import FeatureStore
from laya.storage.zarrio import create_sample_array, read_fast
from laya.train import HeadsConfig, TrainConfig, train_epoch
from record import recorded  # benchmarks/record.py: the output kept in benchmarks/results/

REPO = Path(__file__).resolve().parents[1]
SIDES = ("inputs", "targets")  # MLP inputs and outputs (crosslayer-coding's names)
CLT_FILE_ROWS = 1 << 16


def clt_tokens(store: FeatureStore) -> dict[str, np.ndarray]:
    """{side: (T, L, d)}: every kept token (CLS first, then the sampled patches) of every training image."""
    out = {}
    for side, key in zip(SIDES, ("mlp_in", "mlp_out")):
        cls = store.array("train", f"{key}_cls")[:]  # (N, L, d)
        patch = store.array("train", f"{key}_patch")[:]  # (N, P, L, d)
        tokens = np.concatenate([cls[:, None], patch], axis=1)
        out[side] = np.ascontiguousarray(tokens.reshape(-1, *tokens.shape[2:]))
    return out


def blocks(rows: int, block: int) -> list[slice]:
    return [slice(lo, min(lo + block, rows)) for lo in range(0, rows, block)]


class Layout:
    """One cache layout: `write(folder, arrays, block)` then `read(folder, rows)` → {side: (rows, L, d)}."""

    name = ""

    def write(self, folder: Path, arrays: dict[str, np.ndarray], block: int) -> None:
        raise NotImplementedError

    def reader(self, folder: Path) -> Callable[[slice], dict[str, np.ndarray]]:
        raise NotImplementedError


class LayaStore(Layout):
    def __init__(self, codec: str, name: str, laya_io: bool = True):
        self.codec, self.name, self.laya_io = codec, name, laya_io
        self.label = f"{name} ({codec})"

    def write(self, folder, arrays, block):
        root = zarr.open_group(folder / "store.zarr", mode="w")
        for side, x in arrays.items():
            plan = ShardPlan(len(x), block)
            array = create_sample_array(root, f"train/{side}", plan, x.shape[1:], x.dtype, self.codec)
            for shard in plan:
                if self.laya_io:
                    write_rows(array, plan.slice(shard), x[plan.slice(shard)])
                else:
                    array[plan.slice(shard)] = x[plan.slice(shard)]

    def reader(self, folder):
        root = zarr.open_group(folder / "store.zarr", mode="r")
        if not self.laya_io:
            arrays = {side: root[f"train/{side}"] for side in SIDES}
            return lambda rows: {side: a[rows] for side, a in arrays.items()}
        arrays = {side: read_fast(root[f"train/{side}"]) for side in SIDES}
        return lambda rows: {side: shard_files.read(a, rows) for side, a in arrays.items()}  # as FeatureStore


class H5Chunked(Layout):
    name = label = "h5py"

    def write(self, folder, arrays, block):
        with h5py.File(folder / "acts.h5", "w") as f:
            for side, x in arrays.items():
                chunk = max(1, min(len(x), (1 << 20) // max(1, x[0].nbytes)))  # ≥ 1 MiB chunks, as laya's
                dataset = f.create_dataset(side, shape=x.shape, dtype=x.dtype, chunks=(chunk, *x.shape[1:]))
                for rows in blocks(len(x), block):
                    dataset[rows] = x[rows]

    def reader(self, folder):
        f = h5py.File(folder / "acts.h5", "r")
        return lambda rows: {side: f[side][rows] for side in SIDES}


class H5CrossLayer(Layout):
    """crosslayer-coding's activation chunks: per file of ≤ 2^16 rows, layer_<l>/{inputs,targets} (rows, d),
    chunked (min(max(1000, rows // 10), rows), d), no compression."""

    name = label = "h5py-clt"

    def write(self, folder, arrays, block):
        total, (layers, d) = len(arrays["inputs"]), arrays["inputs"].shape[1:]
        for index, lo in enumerate(range(0, total, CLT_FILE_ROWS)):
            rows = min(CLT_FILE_ROWS, total - lo)
            chunk = rows if rows < 10000 else min(max(1000, rows // 10), rows)
            with h5py.File(folder / f"chunk_{index}.h5", "w") as f:
                for layer in range(layers):
                    for side in SIDES:
                        f.create_dataset(f"layer_{layer}/{side}", shape=(rows, d), dtype=arrays[side].dtype,
                                         chunks=(chunk, d))
                for part in blocks(rows, block):  # rows arrive a block at a time, as from an extraction
                    for side in SIDES:
                        x = arrays[side][lo + part.start:lo + part.stop]
                        for layer in range(layers):
                            f[f"layer_{layer}/{side}"][part] = x[:, layer]

    def reader(self, folder):
        files = [h5py.File(p, "r") for p in sorted(folder.glob("chunk_*.h5"), key=lambda p: int(p.stem[6:]))]
        layers = len([k for k in files[0] if k.startswith("layer_")])

        def read(rows: slice) -> dict[str, np.ndarray]:
            f, lo = files[rows.start // CLT_FILE_ROWS], rows.start % CLT_FILE_ROWS  # blocks never straddle files
            part = slice(lo, lo + rows.stop - rows.start)
            return {side: np.stack([f[f"layer_{layer}/{side}"][part] for layer in range(layers)], axis=1)
                    for side in SIDES}
        return read


class Memmap(Layout):
    name = label = "memmap"

    def write(self, folder, arrays, block):
        for side, x in arrays.items():
            with open(folder / f"{side}.bin", "wb") as fh:
                for rows in blocks(len(x), block):
                    fh.write(np.ascontiguousarray(x[rows]).data)
        self.shapes = {side: (x.shape, x.dtype) for side, x in arrays.items()}

    def reader(self, folder):
        maps = {side: np.memmap(folder / f"{side}.bin", dtype=dt, mode="r", shape=shape)
                for side, (shape, dt) in self.shapes.items()}
        return lambda rows: {side: np.array(m[rows]) for side, m in maps.items()}


class ArrowIPC(Layout):
    name = label = "arrow"

    def write(self, folder, arrays, block):
        layers, d = arrays["inputs"].shape[1:]
        fields = [pa.field(f"{side}_{layer}", pa.list_(pa.float16(), d)) for side in SIDES for layer in range(layers)]
        schema = pa.schema(fields)
        with pa.OSFile(str(folder / "acts.arrow"), "wb") as sink, pa.ipc.new_file(sink, schema) as writer:
            for rows in blocks(len(arrays["inputs"]), block):
                columns = [pa.FixedSizeListArray.from_arrays(
                    pa.array(np.ascontiguousarray(arrays[side][rows, layer]).reshape(-1)), d)
                    for side in SIDES for layer in range(layers)]
                writer.write_batch(pa.record_batch(columns, schema=schema))
        self.layers, self.d, self.block = layers, d, block

    def reader(self, folder):
        source = pa.ipc.open_file(pa.memory_map(str(folder / "acts.arrow"), "r"))

        def read(rows: slice) -> dict[str, np.ndarray]:
            batch = source.get_batch(rows.start // self.block)  # one record batch per block
            return {side: np.stack([batch.column(f"{side}_{layer}").values.to_numpy().reshape(-1, self.d)
                                    for layer in range(self.layers)], axis=1) for side in SIDES}
        return read


def disk_usage(folder: Path) -> tuple[int, int]:
    files = [p for p in folder.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_blocks * 512 for p in files)


def read_seconds(read, order: list[slice]) -> float:
    start = time.perf_counter()
    for rows in order:
        out = read(rows)
        assert out["inputs"].shape[0] == rows.stop - rows.start
    return time.perf_counter() - start


def compare_layouts(arrays: dict[str, np.ndarray], block: int, rounds: int, codec: str, tmp: Path) -> None:
    layouts = [LayaStore(codec, "laya"), LayaStore("lz4", "laya-lz4"), LayaStore("lz4", "zarr-python", laya_io=False),
               H5Chunked(), H5CrossLayer(), Memmap(), ArrowIPC()]
    total = sum(x.nbytes for x in arrays.values())
    sequential = blocks(len(arrays["inputs"]), block)
    shuffled = [sequential[i] for i in np.random.default_rng(0).permutation(len(sequential))]
    best: dict[str, dict[str, float]] = {layout.name: {} for layout in layouts}
    usage = {}
    for _ in range(rounds):  # interleaved, so machine noise hits every layout alike
        for layout in layouts:
            folder = tmp / layout.name
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            start = time.perf_counter()
            layout.write(folder, arrays, block)
            times = {"write": time.perf_counter() - start}
            usage[layout.name] = disk_usage(folder)
            read = layout.reader(folder)
            read_seconds(read, sequential)  # warm: the page cache holds the files
            times["sequential"] = read_seconds(read, sequential)
            times["shuffled"] = read_seconds(read, shuffled)
            for key, secs in times.items():
                best[layout.name][key] = min(best[layout.name].get(key, np.inf), secs)
    mb = total / 1e6
    print(f"activations: {' + '.join(f'{s} {tuple(x.shape)} {x.dtype}' for s, x in arrays.items())} = {mb:.0f} MB; "
          f"blocks of {block} rows; best of {rounds} rounds")
    print(f"{'layout':18s} {'write MB/s':>10s} {'seq read MB/s':>13s} {'shuffled MB/s':>13s} {'on disk MB':>10s} "
          f"{'files':>5s}")
    for layout in layouts:
        t, (files, size) = best[layout.name], usage[layout.name]
        print(f"{layout.label:18s} {mb / t['write']:10.0f} {mb / t['sequential']:13.0f} {mb / t['shuffled']:13.0f} "
              f"{size / 1e6:10.0f} {files:5d}", flush=True)
    laya, h5, mm = best[layouts[0].name], best["h5py"], best["memmap"]
    print(f"laya store vs h5py write: {h5['write'] / laya['write']:.2f}× (target ≥ 0.70) | sequential read vs "
          f"memmap: {mm['sequential'] / laya['sequential']:.2f}× (target ≥ 0.50)")


def timed(batches: Iterator, waits: list[float]) -> Iterator:
    """The batches, adding to waits[0] the seconds each `next` took on the caller's thread."""
    while True:
        start = time.perf_counter()
        try:
            item = next(batches)
        except StopIteration:
            return
        finally:
            waits[0] += time.perf_counter() - start
        yield item


def evict(folder: Path) -> None:
    """Drop the folder's files from the page cache (posix_fadvise DONTNEED), so the next read comes from disk."""
    for path in folder.rglob("*"):
        if path.is_file():
            fd = os.open(path, os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def loader_stall(features: Path, heads: HeadsConfig, cfg: TrainConfig, rounds: int) -> None:
    """A LAYA epoch with memory_mb 0 from a cold store: epoch seconds and the seconds the step waited on the
    cache."""
    store = FeatureStore.open(features)
    store.keep_in_memory(0)
    for prefetch in (2, 0) * rounds:
        evict(features)
        torch.manual_seed(0)
        head = build("laya", store.dims, len(store.info.classes), config=heads.config("laya"))
        optimizer = torch.optim.Adam(head.parameters(), lr=cfg.lr)
        waits = [0.0]
        batches = store.batches("train", cfg.batch_size, shuffle=True, seed=0, window_blocks=cfg.window_blocks,
                                prefetch=prefetch)
        with one_thread():  # as the train stage trains every head (laya.core.parallel)
            start = time.perf_counter()
            train_epoch(head, optimizer, nn.CrossEntropyLoss(), timed(batches, waits), cfg.input_dropout)
            epoch = time.perf_counter() - start
        print(f"loader, train.memory_mb 0, prefetch {prefetch}: LAYA epoch of {store.num_samples('train')} samples "
              f"{epoch:5.2f} s | waiting on the cache {waits[0]:5.2f} s = {100 * waits[0] / epoch:4.1f} % of the epoch "
              f"(target ≤ 5 %)", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--features", default=str(REPO / "data" / "features" / "vit.zarr"))
    p.add_argument("--block", type=int, default=8192, help="rows per write and per read (a power of two)")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--tmp", default=None, help="folder for the written layouts (default: a temporary folder)")
    args = p.parse_args()
    params = load_params(REPO / "params.yaml")
    codec = params.get("extract", {}).get("codec", "lz4")
    store = FeatureStore.open(args.features)
    features = Path(args.features).resolve()
    shown = features.relative_to(REPO) if features.is_relative_to(REPO) else features
    print(f"torch threads: {torch.get_num_threads()}, cpus: {os.cpu_count()}, store {shown}")
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        compare_layouts(clt_tokens(store), args.block, args.rounds, codec, Path(tmp))
    heads = HeadsConfig.parse(section(params, "heads"))
    train = resolve(params, store.info.backbone).train
    loader_stall(Path(args.features), heads, train, args.rounds)


if __name__ == "__main__":
    with recorded(__file__):
        main()
