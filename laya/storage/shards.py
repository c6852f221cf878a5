"""The shard: laya's unit of writing, resuming and distributing the rows of a sample-major array.

`ShardPlan(num_rows, shard_size)` cuts rows 0..num_rows into `count` shards of `shard_size` rows (the last one
may be shorter). Extraction computes and writes whole shards, the progress record lists finished shards, readers
read a shard at a time — all through this one object, so the geometry is defined once.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class ShardPlan:
    num_rows: int
    shard_size: int  # a power of two (zarr chunk lengths are powers of two and must divide it)

    def __post_init__(self) -> None:
        assert self.num_rows >= 0, self.num_rows
        assert self.shard_size >= 1 and self.shard_size & (self.shard_size - 1) == 0, self.shard_size

    @property
    def count(self) -> int:
        return -(-self.num_rows // self.shard_size)

    def start(self, i: int) -> int:
        return i * self.shard_size

    def rows(self, i: int) -> int:
        """Rows in shard i."""
        return min(self.shard_size, self.num_rows - self.start(i))

    def slice(self, i: int) -> slice:
        return slice(self.start(i), self.start(i) + self.rows(i))

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.count))

    def rows_in(self, shards) -> int:
        """Total rows of the given shard indices."""
        return sum(self.rows(i) for i in shards)


def is_power_of_two(n: int) -> bool:
    return n >= 1 and n & (n - 1) == 0
