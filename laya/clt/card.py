"""The transcoder card: its shape, the params it was trained with, and the cache it was trained on; a CLT saved
as model.safetensors + config.json and loaded back from them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from laya.clt.config import CLTConfig
from laya.clt.model import CrossLayerTranscoder
from laya.core.artifacts import Card, load_module, save_module


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


def save_clt(model: CrossLayerTranscoder, out_dir: str | Path, **provenance) -> CLTCard:
    """model.safetensors (weights and standardisation buffers) + config.json (a CLTCard: build spec plus
    `provenance`, e.g. layers, cache_fingerprint, history)."""
    card = CLTCard(num_layers=model.num_layers, d_model=model.d_model, config=model.cfg, **provenance)
    return save_module(out_dir, model, card)


def load_clt(path: str | Path) -> CrossLayerTranscoder:
    """Rebuild a saved CLT (strict load, eval mode); a missing or mismatched file is a one-line error."""
    return load_module(path, CLTCard, lambda card: CrossLayerTranscoder(card.num_layers, card.d_model,
                                                                        card.config))[0]
