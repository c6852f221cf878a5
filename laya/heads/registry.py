"""The head registry: name → (head class, Config dataclass); build by name, save and load with a HeadCard.

A new head is one file (the class and its Config) plus one line in `HEADS`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from laya.artifacts import load_module, save_module
from laya.config import ConfigError, from_dict
from laya.heads.aligned import AlignedLAYA, AlignedLAYAConfig
from laya.heads.attention import LAYA, JointLAYA, LAYAConfig
from laya.heads.base import LayerHead
from laya.heads.card import HeadCard
from laya.heads.linear import Concat, LastLayer, LinearConfig
from laya.heads.scalarmix import ScalarMix, ScalarMixConfig


@dataclass(frozen=True)
class HeadType:
    cls: type[LayerHead]
    config: type  # a frozen dataclass of the head's hyper-parameters, with validate(key)


HEADS: dict[str, HeadType] = {
    "last": HeadType(LastLayer, LinearConfig),
    "concat": HeadType(Concat, LinearConfig),
    "scalarmix": HeadType(ScalarMix, ScalarMixConfig),
    "laya": HeadType(LAYA, LAYAConfig),
    "laya_joint": HeadType(JointLAYA, LAYAConfig),
    "laya_aligned": HeadType(AlignedLAYA, AlignedLAYAConfig),
}
JOINT_HEADS = ("laya_joint",)  # trained with their backbone by the joint protocol, never from a cache
CACHE_HEADS = tuple(name for name in HEADS if name not in JOINT_HEADS)  # what the train stage trains


def head_type(name: str) -> HeadType:
    if name not in HEADS:
        raise ConfigError(f"heads: unknown head {name!r}; valid: {sorted(HEADS)}.")
    return HEADS[name]


def parse_config(name: str, params: dict | None, key: str | None = None):
    """The typed Config of head `name` from its params section (errors name `heads.<name>.<key>`)."""
    return from_dict(head_type(name).config, params, key or f"heads.{name}")


def build(name: str, dims: list[int], num_classes: int, config=None, **params) -> LayerHead:
    """A fresh head `name` over layers of widths `dims`: from a typed `config`, or from `params` (the keys of
    heads.<name>, e.g. tau=0.5)."""
    if config is not None and params:
        raise TypeError("build(): give a config or keyword params, not both")
    config = config if config is not None else parse_config(name, params)
    return head_type(name).cls(list(dims), num_classes, config)


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
