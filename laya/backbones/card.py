"""The backbone card: what a frozen backbone is, what it was trained on, and how to feed it images."""

from __future__ import annotations

from dataclasses import dataclass, field

from laya.backbones.config import BackboneConfig
from laya.core.artifacts import Card
from laya.images import Preprocess


@dataclass(frozen=True, kw_only=True)
class BackboneCard(Card):
    """config.json beside a backbone's model.safetensors. Holds only what the inputs determine (no timings)."""

    KIND = "backbone"
    name: str  # the key of params `backbones`
    config: BackboneConfig  # the params it was built with
    in_chans: int
    img_size: int  # side length the backbone sees (after Preprocess)
    num_classes: int
    classes: list[str]
    mean: list[float]  # per-channel normalisation
    std: list[float]
    data_sha256: str  # the prepared data it was trained on
    laya_version: str
    parameters: int = 0
    test_accuracy: float | None = None
    val_accuracy: float | None = None
    best_epoch: int = 0
    history: list[dict] = field(default_factory=list)  # per epoch: train_loss, val_accuracy

    @property
    def rebuild(self) -> str:
        return f"dvc repro backbone@{self.name}"

    def preprocess(self) -> Preprocess:
        """uint8 images → this backbone's input."""
        return Preprocess(self.mean, self.std, self.img_size)
