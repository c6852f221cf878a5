"""The head card: how to rebuild a trained head, which cache and layers it read, and how well it did."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from laya.artifacts import Card


@dataclass(frozen=True, kw_only=True)
class HeadCard(Card):
    """config.json beside a head's model.safetensors."""

    KIND = "head"
    name: str  # registered head name
    dims: list[int]  # widths of the layers it reads
    num_classes: int
    params: dict[str, Any]  # its Config (heads.<name>) as saved
    backbone: str = ""  # the backbone whose cache it was trained on
    seed: int | None = None
    layers: list[str] = field(default_factory=list)  # names of the layers it reads, depth order
    layer_indices: list[int] = field(default_factory=list)  # their indices in the store
    cache_fingerprint: str = ""  # the store's fingerprint hash
    test_accuracy: float | None = None
    macro_f1: float | None = None
    best_epoch: int = 0
    history: list[dict] = field(default_factory=list)  # per epoch: train_loss, train_acc, val_loss, val_acc

    @property
    def rebuild(self) -> str:
        return f"dvc repro train@{self.backbone or '<backbone>'}"


def head_folder(root: str | Path, name: str, seed: int) -> Path:
    """Where the train stage keeps head `name` trained with `seed`: <root>/<name>/seed<seed>/."""
    return Path(root) / name / f"seed{seed}"
