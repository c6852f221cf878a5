"""Which shards of a store under construction are complete: one marker file per shard, safe for many writers.

`<work dir>/<store>.progress/spec.json` holds what is being built (fingerprint, settings, sizes); a shard's
marker `<split>.<shard>` appears only after all of its arrays are written. Any rank of any run writes markers
for the shards it owns, so a killed run — one process or several, on any number of machines sharing the folder
— resumes from the completed shards, whoever wrote them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from laya.io import atomic_path, read_json, write_json

Done = dict[str, list[int]]  # split → completed shard indices


class ShardProgress:
    def __init__(self, folder: Path):
        self.folder = Path(folder)

    def done(self, spec: dict) -> Done | None:
        """The completed shards of an earlier build of the same spec, or None when there is nothing to resume."""
        spec_file = self.folder / "spec.json"
        if not spec_file.is_file():
            return None
        try:
            if read_json(spec_file, "extraction progress") != spec:
                return None
        except ValueError:
            return None
        done: Done = {}
        for marker in self.folder.iterdir():
            split, _, shard = marker.name.partition(".")
            if shard.isdigit():
                done.setdefault(split, []).append(int(shard))
        return {split: sorted(shards) for split, shards in done.items()}

    def start(self, spec: dict) -> None:
        """Forget any earlier build: a fresh folder holding only `spec`."""
        self.remove()
        self.folder.mkdir(parents=True)
        write_json(self.folder / "spec.json", spec)

    def mark(self, split: str, shard: int) -> None:
        """Record one shard as complete (an atomic rename: a marker is whole or absent)."""
        with atomic_path(self.folder / f"{split}.{shard}") as tmp:
            tmp.touch()

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
