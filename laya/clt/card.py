"""The transcoder card: its shape, the params it was trained with, and the cache it was trained on."""

from __future__ import annotations

from dataclasses import dataclass, field

from laya.artifacts import Card
from laya.clt.config import CLTConfig


@dataclass(frozen=True, kw_only=True)
class CLTCard(Card):
    """config.json beside a CLT's model.safetensors."""

    KIND = "clt"
    num_layers: int
    d_model: int
    config: CLTConfig  # params `clt` used (dict_size, activation, k, threshold, bandwidth build the model)
    layers: list[str] = field(default_factory=list)  # the ViT blocks, depth order
    cache_fingerprint: str = ""
    history: list[dict] = field(default_factory=list)  # per epoch: recon_loss, l0

    @property
    def rebuild(self) -> str:
        return "dvc repro clt"
