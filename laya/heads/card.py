"""The head card: how to rebuild a trained head, which cache and layers it read, and how well it did; a head
saved as model.safetensors + config.json and loaded back from them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from laya.core.artifacts import Card, load_module, save_module
from laya.heads.base import LayerHead
from laya.heads.registry import build, parse_config


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


def save(head: LayerHead, out_dir: str | Path, **provenance) -> HeadCard:
    """Write model.safetensors + config.json (a HeadCard: the build spec plus `provenance`, e.g. seed, layers)."""
    card = HeadCard(name=head.name, dims=head.dims, num_classes=head.num_classes, params=asdict(head.config),
                    **provenance)
    return save_module(out_dir, head, card)


def _rebuild(card: HeadCard) -> LayerHead:
    return build(card.name, card.dims, card.num_classes, config=parse_config(card.name, card.params))


def load_with_card(path: str | Path) -> tuple[LayerHead, HeadCard]:
    """A saved head (strict load, eval mode) and its card."""
    return load_module(path, HeadCard, _rebuild)


def load(path: str | Path) -> LayerHead:
    """Rebuild a saved head from its card and load its weights (strict, eval mode)."""
    return load_with_card(path)[0]
