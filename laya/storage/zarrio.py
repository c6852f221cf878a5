"""Zarr-v3 array creation shared by the prepared-data store and the feature store, and the fast read path.

Arrays are chunked along the sample axis (chunks ≥ `MIN_CHUNK_BYTES`) and sharded by a `ShardPlan`, so a store
holds a few shard files per array instead of thousands of chunk files (DVC hashes every file of an output).
They are written by zarr-python's own codec pipeline (the bytes DVC has recorded) and read, on a local disk,
through zarrs (`read_fast`).
"""

from __future__ import annotations

import math

import numpy as np
import zarr
from zarr.codecs import BloscCodec, BloscShuffle, ZstdCodec
from zarr.storage import LocalStore
from zarrs import ZarrsCodecPipeline

from laya.storage.shards import ShardPlan

CODECS = ("lz4", "zstd", "none")  # validated once, in the config that names the codec
MIN_CHUNK_BYTES = 1 << 20


def compressors(codec: str):
    """Zarr compressor list for a codec name: Blosc-LZ4 with byte shuffle, Zstd level 1, or none."""
    if codec == "lz4":
        return [BloscCodec(cname="lz4", clevel=5, shuffle=BloscShuffle.shuffle)]
    if codec == "zstd":
        return [ZstdCodec(level=1)]
    assert codec == "none", codec
    return None


def chunk_rows(row_shape: tuple[int, ...], dtype: np.dtype, shard_rows: int) -> int:
    """Rows per chunk: the smallest power of two whose chunk holds ≥ 1 MiB, capped at `shard_rows`."""
    row_bytes = max(1, int(np.prod(row_shape, dtype=np.int64)) * np.dtype(dtype).itemsize)
    rows = 1 << max(0, math.ceil(math.log2(MIN_CHUNK_BYTES / row_bytes)))
    return min(rows, shard_rows)


def create_sample_array(group: zarr.Group, name: str, plan: ShardPlan, row_shape: tuple[int, ...], dtype,
                        codec: str, attributes: dict | None = None) -> zarr.Array:
    """A (plan.num_rows, *row_shape) array chunked along axis 0 and stored one zarr shard per plan shard (an
    array shorter than one shard gets a single shard rounded up to whole chunks)."""
    rows = chunk_rows(row_shape, dtype, plan.shard_size)
    shard = max(rows, min(plan.shard_size, -(-max(plan.num_rows, 1) // rows) * rows))
    return group.create_array(
        name,
        shape=(plan.num_rows, *row_shape),
        dtype=dtype,
        chunks=(rows, *row_shape),
        shards=(shard, *row_shape),
        compressors=compressors(codec),
        fill_value=0,
        attributes=attributes or {},
        config={"write_empty_chunks": True},  # skips a compare-with-fill pass over every chunk written
    )


def read_fast(array: zarr.Array) -> zarr.Array:
    """`array`, its reads decoded by zarrs (the Rust zarrs crate's codec pipeline for zarr-python: a selection's
    chunks fetched and decoded on a thread pool; benchmarks/store.py compares it with zarr-python's own pipeline)
    when it lies on a local disk; unchanged elsewhere (zarrs reads no fsspec store but HTTP). Same
    values either way. Only for arrays opened to read: zarrs writes other (equally valid) shard bytes than the
    ones a store's dvc.lock records.

    The pipeline is swapped on this one array object rather than set in zarr's global config, so arrays another
    thread opens meanwhile (an extraction's writer) keep zarr-python's."""
    inner = array.async_array
    store = inner.store_path.store
    if isinstance(store, LocalStore):
        pipeline = ZarrsCodecPipeline.from_array_metadata_and_store(array_metadata=inner.metadata, store=store)
        object.__setattr__(inner, "codec_pipeline", pipeline)  # how AsyncArray.__init__ sets its own
    return array
