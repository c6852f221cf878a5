"""A feature store's card: the root attributes every reader relies on, typed and validated once.

The writer (`laya.extract`) builds a `StoreInfo` and saves it as the root group's attributes; the reader
(`laya.FeatureStore`) loads it back. `fingerprint` is what the cached values depend on — later stages compare it
with the backbone and data they expect, and the heads record its `hash`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from laya.core.config import ConfigError, from_dict
from laya.storage.shards import ShardPlan


@dataclass(frozen=True)
class Fingerprint:
    backbone_sha256: str  # the weights file the activations were computed with (hashed when loaded)
    data_sha256: str  # the prepared data
    pooling: str = "cls"
    dtype: str = "float16"
    mlp_io: bool = False
    patch_tokens: int | str | None = None
    seed: int = 0
    laya_version: str = ""
    autocast: str = "none"  # the forward pass's CUDA autocast (extract.autocast)
    hash: str = ""  # a 16-hex summary of the fields above

    @classmethod
    def of(cls, **body) -> Fingerprint:
        """A fingerprint whose `hash` summarises `body` (sha256 of its sorted JSON, first 16 hex digits).
        `autocast: none` is left out of the summary, so caches built before autocast existed keep their hash."""
        if body.get("autocast", "none") == "none":
            body.pop("autocast", None)
        return cls(**body, hash=hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16])

    def to_attrs(self) -> dict[str, Any]:
        values = dataclasses.asdict(self)
        if self.autocast == "none":
            del values["autocast"]
        return values


@dataclass(frozen=True)
class StoreInfo:
    backbone: str  # the key of params `backbones` the store was extracted from
    layers: list[str]  # layer names, depth order
    dims: list[int]  # their widths
    classes: list[str]
    sizes: dict[str, int]  # rows per split
    fingerprint: Fingerprint
    mlp_io: bool = False  # ViTs: MLP inputs/outputs cached too
    num_patches: int = 0
    patch_tokens_kept: int = 0
    prefix_tokens: int = 0
    extract: dict[str, Any] = field(default_factory=dict)  # the extract params used (shard_size among them)

    @property
    def shard_size(self) -> int:
        return int(self.extract.get("shard_size", 8192))

    def shard_plan(self, split: str) -> ShardPlan:
        return ShardPlan(int(self.sizes[split]), self.shard_size)

    def to_attrs(self) -> dict[str, Any]:
        """The root attributes, in a fixed key order (so the store's metadata bytes are stable)."""
        keys = ("backbone", "layers", "dims", "classes", "sizes", "mlp_io", "num_patches", "patch_tokens_kept",
                "prefix_tokens", "extract", "fingerprint")
        values = {**dataclasses.asdict(self), "fingerprint": self.fingerprint.to_attrs()}
        return {k: values[k] for k in keys}

    @classmethod
    def from_attrs(cls, attrs: dict[str, Any], where: str) -> StoreInfo:
        missing = [k for k in ("layers", "dims", "sizes", "fingerprint") if k not in attrs]
        if missing:
            raise ConfigError(f"{where}: not a laya feature store (attrs {missing} missing); rebuild it with "
                              f"`dvc repro extract@<backbone>`.")
        try:
            info = from_dict(cls, dict(attrs), "attrs")
        except ConfigError as err:
            raise ConfigError(f"{where}: unreadable feature-store attributes ({err}); rebuild it with "
                              f"`dvc repro extract@{attrs.get('backbone', '<backbone>')}`.") from None
        if len(info.layers) != len(info.dims):
            raise ConfigError(f"{where}: {len(info.layers)} layer names but {len(info.dims)} widths; rebuild it "
                              f"with `dvc repro extract@{info.backbone}`.")
        return info
