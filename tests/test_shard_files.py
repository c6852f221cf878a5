"""The whole-shard writer (laya.storage.shard_files) writes the bytes zarr-python writes, and leaves what it cannot
encode to zarr-python."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import zarr

from laya.storage.shard_files import read_rows, write_rows
from laya.storage.shards import ShardPlan
from laya.storage.zarrio import create_sample_array


def _files(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def _write(path: Path, values: np.ndarray, shard_rows: int, codec: str, whole_shards: bool) -> zarr.Array:
    root = zarr.open_group(path, mode="w")
    plan = ShardPlan(len(values), shard_rows)
    array = create_sample_array(root, "train/x", plan, values.shape[1:], values.dtype, codec)
    for shard in plan:
        rows = plan.slice(shard)
        if whole_shards:
            assert write_rows(array, rows, values[rows]), "a whole shard is written in one pass"
        else:
            array[rows] = values[rows]
    return array


@pytest.mark.parametrize("codec", ["none", "lz4", "zstd"])
@pytest.mark.parametrize("rows, row_shape, dtype, shard_rows", [
    (5000, (64,), "float16", 1024),  # several chunks per shard, a last shard ending inside a chunk
    (300, (6, 64), "float16", 1024),  # shorter than one shard (the shard is rounded up to whole chunks)
    (4096, (3, 2, 8), "float32", 512),  # exactly whole shards, 3-d rows
    (777, (), "int32", 256),  # labels
    (777, (4,), "int16", 256),  # patch indices
    (1000, (28, 28, 1), "uint8", 4096),  # images (one-byte values: no endianness in the codec)
])
def test_whole_shards_are_the_bytes_zarr_python_writes(tmp_path, codec, rows, row_shape, dtype, shard_rows):
    rng = np.random.default_rng(0)
    values = (rng.standard_normal((rows, *row_shape)) * 50).astype(dtype)
    values[: rows // 7] = 0  # some all-zero chunks: written all the same (write_empty_chunks)
    _write(tmp_path / "zarr.zarr", values, shard_rows, codec, whole_shards=False)
    fast = _write(tmp_path / "fast.zarr", values, shard_rows, codec, whole_shards=True)
    assert _files(tmp_path / "fast.zarr") == _files(tmp_path / "zarr.zarr")
    assert np.array_equal(fast[:], values)


def test_rows_that_are_not_one_whole_shard_go_through_zarr(tmp_path):
    values = np.arange(3000 * 16, dtype=np.float16).reshape(3000, 16)
    root = zarr.open_group(tmp_path / "s.zarr", mode="w")
    array = create_sample_array(root, "x", ShardPlan(3000, 1024), (16,), "float16", "lz4")
    assert write_rows(array, slice(0, 1024), values[:1024])
    assert not write_rows(array, slice(1024, 1500), values[1024:1500])  # part of a shard: zarr merges it
    assert not write_rows(array, slice(1500, 3000), values[1500:])  # straddles two shards
    assert np.array_equal(array[:], values)
    assert not list((tmp_path / "s.zarr").rglob("*.partial"))


def test_a_store_that_is_not_on_the_local_disk_goes_through_zarr():
    root = zarr.open_group(zarr.storage.MemoryStore(), mode="w")
    array = create_sample_array(root, "x", ShardPlan(100, 64), (4,), "float16", "lz4")
    values = np.ones((64, 4), np.float16)
    assert not write_rows(array, slice(0, 64), values)
    assert np.array_equal(array[:64], values)


@pytest.mark.parametrize("selection", [slice(0, 5000), slice(0, 1), slice(1000, 1100), slice(1020, 2100),
                                       slice(4090, 5000), slice(4999, 5000), slice(3000, 3000), slice(None)])
def test_uncompressed_rows_are_read_straight_from_the_shards(tmp_path, selection):
    values = np.random.default_rng(1).standard_normal((5000, 3, 64)).astype(np.float16)
    array = _write(tmp_path / "s.zarr", values, 1024, "none", whole_shards=True)
    got = read_rows(array, selection)
    assert got is not None and got.dtype == values.dtype and np.array_equal(got, values[selection])


def test_compressed_or_damaged_shards_are_left_to_zarr(tmp_path):
    values = np.random.default_rng(2).standard_normal((3000, 64)).astype(np.float16)
    assert read_rows(_write(tmp_path / "lz4.zarr", values, 1024, "lz4", whole_shards=True), slice(0, 10)) is None
    array = _write(tmp_path / "none.zarr", values, 1024, "none", whole_shards=True)
    shard = tmp_path / "none.zarr" / "train" / "x" / "c" / "1" / "0"
    shard.write_bytes(shard.read_bytes()[:-100])  # truncated: its index is gone
    assert read_rows(array, slice(1024, 1030)) is None and read_rows(array, slice(0, 10)) is not None
    shard.unlink()  # never written: zarr gives the fill value
    assert read_rows(array, slice(1024, 1030)) is None
