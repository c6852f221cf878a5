"""Where each protocol keeps its backbones and caches: one *unit* per backbone an entry trains.

`frozen` and `transfer` train one backbone: its folder is the entry's own (data/backbones/<name>/, cache
data/features/<name>.zarr) and every head seed reads it. `joint` trains one backbone + LAYA head per seed k:
backbone data/backbones/<name>/seed<k>/, cache data/features/<name>.zarr/seed<k>/ (a child group of the Zarr
hierarchy), and the heads of seed k are trained on that cache only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from laya.backbones.config import BackboneConfig
from laya.storage.location import is_url


@dataclass(frozen=True)
class Unit:
    """One backbone of an entry: `name` is its sub-folder ('' = the entry's folder itself); `seeds` the head
    seeds trained on its cache (None = train.seeds)."""

    name: str
    seeds: list[int] | None = None

    def path(self, root: str | Path) -> Path | str:
        """This unit's store or folder under `root` (a local path, or an fsspec URL kept as a string)."""
        if is_url(root):
            return f"{str(root).rstrip('/')}/{self.name}" if self.name else str(root)
        return Path(root) / self.name if self.name else Path(root)

    def head_seeds(self, train_seeds: list[int]) -> list[int]:
        return list(self.seeds) if self.seeds is not None else list(train_seeds)


def units(cfg: BackboneConfig, key: str = "backbones.<name>") -> list[Unit]:
    """The units of a backbones entry, in seed order."""
    if cfg.protocol == "joint":
        return [Unit(f"seed{seed}", [seed]) for seed in cfg.joint_config(key).seeds]
    return [Unit("")]
