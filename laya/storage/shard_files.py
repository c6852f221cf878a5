"""Zarr v3 shard files written and read directly, for the layout laya's stores use.

`write_rows`: a whole shard in one pass — the bytes zarr-python writes for the same rows, without its work per
chunk (an event loop task per chunk, a fill-value buffer per chunk, reading the shard file it is about to
replace, joining the chunks into one more buffer); benchmarks/store.py compares the two. These writes are what
extraction adds to the forward pass.
`read_rows`: rows of an uncompressed array (extract.codec none) copied from the shard files into the result
with one read per shard, after checking the shard's index (its crc32c, every chunk where the layout puts it).

A shard file of an array made by `laya.storage.zarrio.create_sample_array` (sharding_indexed, inner chunks of whole
rows):

    encode(chunk_0) ‖ … ‖ encode(chunk_{n-1}) ‖ index ‖ crc32c(index)

encode = the chunk's rows, C order and little-endian, padded with the fill value to whole chunks, then the
array's compressor (none, Blosc or Zstd, numcodecs as zarr uses it); index = (offset, nbytes) per chunk as
little-endian uint64, (2⁶⁴−1, 2⁶⁴−1) for a chunk past the array's end. Anything else (another layout, codec, a
store not on the local disk, rows that are not one whole shard) goes through zarr-python.
"""

from __future__ import annotations

import os
from pathlib import Path

import google_crc32c
import numcodecs
import numpy as np
import zarr
from zarr.codecs import BloscCodec, BytesCodec, Crc32cCodec, ShardingCodec, ZstdCodec
from zarr.codecs.sharding import ShardingCodecIndexLocation
from zarr.storage import LocalStore

MISSING = np.iinfo(np.uint64).max
INDEX_ENTRY_BYTES, CRC_BYTES = 16, 4
SHUFFLES = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}


def write_rows(array: zarr.Array, rows: slice, values: np.ndarray) -> bool:
    """array[rows] = values, in one pass when `rows` is one whole shard of a layout this module encodes (then
    True), else by zarr-python (False)."""
    if _write_whole_shard(array, rows, values):
        return True
    array[rows] = values
    return False


def _numcodecs(codec: BloscCodec | ZstdCodec) -> numcodecs.abc.Codec:
    """The numcodecs object zarr compresses a chunk with, configured as zarr's codec configures its own."""
    if isinstance(codec, BloscCodec):
        return numcodecs.Blosc.from_config({"cname": codec.cname.value, "clevel": codec.clevel,
                                            "shuffle": SHUFFLES[codec.shuffle.value], "blocksize": codec.blocksize,
                                            "typesize": codec.typesize})
    return numcodecs.Zstd.from_config({"level": codec.level, "checksum": codec.checksum})


def _layout(array: zarr.Array):
    """(shard rows, chunk rows, zarr compressor codec or None, shard file's folder) if this module can write the
    array's shards, else None."""
    meta, store = array.metadata, array.store_path.store
    if not isinstance(store, LocalStore) or getattr(meta, "zarr_format", 3) != 3 or len(meta.codecs) != 1:
        return None
    sharding = meta.codecs[0]
    if not isinstance(sharding, ShardingCodec) or sharding.index_location != ShardingCodecIndexLocation.end:
        return None
    shard_shape, chunk_shape = tuple(array.shards), tuple(sharding.chunk_shape)
    if shard_shape[1:] != tuple(meta.shape[1:]) or chunk_shape[1:] != shard_shape[1:] or \
            shard_shape[0] % chunk_shape[0]:
        return None  # only arrays chunked and sharded along the sample axis
    index_codecs = [type(c) for c in sharding.index_codecs]
    first, *rest = sharding.codecs
    if index_codecs != [BytesCodec, Crc32cCodec] or not isinstance(first, BytesCodec) or len(rest) > 1:
        return None
    compressor = rest[0] if rest else None
    if (compressor is not None and not isinstance(compressor, BloscCodec | ZstdCodec)) or \
            (first.endian is not None and first.endian.value != "little"):
        return None
    return shard_shape[0], chunk_shape[0], compressor, Path(store.root) / array.store_path.path


def _write_whole_shard(array: zarr.Array, rows: slice, values: np.ndarray) -> bool:
    layout = _layout(array)
    if layout is None:
        return False
    shard_rows, chunk_rows, compressor, folder = layout
    total = array.shape[0]
    if rows.start % shard_rows or rows.stop != min(rows.start + shard_rows, total) or \
            values.shape != (rows.stop - rows.start, *array.shape[1:]) or values.dtype != array.dtype or \
            array.metadata.fill_value != 0 or not values.dtype.isnative or values.dtype.byteorder == ">":
        return False
    values = np.ascontiguousarray(values)
    compressor = None if compressor is None else _numcodecs(compressor)
    parts, index = [], np.full((shard_rows // chunk_rows, 2), MISSING, dtype="<u8")
    offset = 0
    for i, lo in enumerate(range(0, len(values), chunk_rows)):
        chunk = values[lo:lo + chunk_rows]
        if len(chunk) < chunk_rows:  # the array's last chunk: padded with the fill value, as zarr stores it
            chunk = np.concatenate([chunk, np.zeros((chunk_rows - len(chunk), *chunk.shape[1:]), chunk.dtype)])
        data = memoryview(chunk).cast("B") if compressor is None else compressor.encode(chunk)
        parts.append(data)
        index[i] = offset, len(data)
        offset += len(data)
    index_bytes = index.tobytes()
    parts += [index_bytes, google_crc32c.value(index_bytes).to_bytes(4, "little")]
    key = array.metadata.encode_chunk_key((rows.start // shard_rows,) + (0,) * (array.ndim - 1))
    _write_atomically(folder / key, parts)
    return True


def _write_atomically(path: Path, parts: list) -> None:
    """The file at `path` holds the concatenated parts, or is as it was (written beside it, then renamed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    with open(partial, "wb") as out:
        out.writelines(parts)
    os.replace(partial, path)


def read(array: zarr.Array, rows: slice) -> np.ndarray:
    """array[rows]: straight from the shard files when `read_rows` can, else through the array's codec pipeline."""
    values = read_rows(array, rows)
    return array[rows] if values is None else values


def read_rows(array: zarr.Array, rows: slice) -> np.ndarray | None:
    """array[rows] read straight from the shard files when the array is stored uncompressed on the local disk and
    every shard's index is intact and in the layout's order; None otherwise (read it through zarr then, which
    also reports a damaged shard)."""
    layout = _layout(array)
    if layout is None or layout[2] is not None or not array.dtype.isnative:
        return None
    shard_rows, chunk_rows, _, folder = layout
    start, stop, _ = rows.indices(array.shape[0])
    out = np.empty((max(0, stop - start), *array.shape[1:]), dtype=array.dtype)
    if not out.size:
        return out
    row_bytes = out[0:1].nbytes
    flat = memoryview(out).cast("B")
    for shard in range(start // shard_rows, -(-stop // shard_rows)):
        lo, hi = max(start, shard * shard_rows), min(stop, (shard + 1) * shard_rows)
        key = array.metadata.encode_chunk_key((shard,) + (0,) * (array.ndim - 1))
        into = flat[(lo - start) * row_bytes:(hi - start) * row_bytes]
        if not _read_shard_rows(folder / key, shard_rows // chunk_rows, chunk_rows * row_bytes,
                                (lo - shard * shard_rows) * row_bytes, into):
            return None
    return out


def _read_shard_rows(path: Path, chunks: int, chunk_bytes: int, offset: int, into: memoryview) -> bool:
    """Fill `into` from byte `offset` of the shard's data, if its index says the chunks covering that range lie
    uncompressed, back to back from the start of the file."""
    index_bytes = chunks * INDEX_ENTRY_BYTES + CRC_BYTES
    try:
        with open(path, "rb", buffering=0) as f:
            size = os.fstat(f.fileno()).st_size
            if size < index_bytes:
                return False
            f.seek(size - index_bytes)
            raw = f.read(index_bytes)
            if google_crc32c.value(raw[:-CRC_BYTES]) != int.from_bytes(raw[-CRC_BYTES:], "little"):
                return False
            index = np.frombuffer(raw[:-CRC_BYTES], dtype="<u8").reshape(chunks, 2)
            first, last = offset // chunk_bytes, (offset + len(into) - 1) // chunk_bytes
            wanted = np.arange(first, last + 1, dtype=np.uint64)
            if not (np.array_equal(index[first:last + 1, 0], wanted * np.uint64(chunk_bytes))
                    and np.all(index[first:last + 1, 1] == chunk_bytes)):
                return False
            f.seek(offset)
            return f.readinto(into) == len(into)
    except FileNotFoundError:  # a shard never written: zarr reads it as the fill value
        return False
