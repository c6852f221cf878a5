"""Which shards of a store under construction are complete: one marker per shard, safe for many writers.

`<work dir>/<store>.progress/spec.json` holds what is being built (fingerprint, settings, sizes); a shard's
marker `<split>.<shard>` appears only after all of its arrays are written. Any rank of any run writes markers
for the shards it owns, so a killed run — one process or several, on any number of machines sharing the folder
or the bucket — resumes from the completed shards, whoever wrote them. A marker is an empty file (an atomic
rename on a local disk, one PUT on an object store): whole or absent.
"""

from __future__ import annotations

import json

from laya.storage.location import Location

Done = dict[str, list[int]]  # split → completed shard indices


class ShardProgress:
    def __init__(self, folder: Location | str):
        self.folder = Location.of(folder)

    def done(self, spec: dict) -> Done | None:
        """The completed shards of an earlier build of the same spec, or None when there is nothing to resume."""
        try:
            if json.loads((self.folder / "spec.json").read_bytes()) != spec:
                return None
        except (FileNotFoundError, ValueError):
            return None
        done: Done = {}
        for name in self.folder.names():
            split, _, shard = name.partition(".")
            if shard.isdigit():
                done.setdefault(split, []).append(int(shard))
        return {split: sorted(shards) for split, shards in done.items()}

    def start(self, spec: dict) -> None:
        """Forget any earlier build: a fresh folder holding only `spec`."""
        self.remove()
        self.folder.makedirs()
        (self.folder / "spec.json").write_bytes(json.dumps(spec, indent=2, sort_keys=True).encode() + b"\n")

    def mark(self, split: str, shard: int) -> None:
        """Record one shard as complete."""
        (self.folder / f"{split}.{shard}").write_bytes(b"")

    def remove(self) -> None:
        self.folder.remove()
