"""The head registry: name → (head class, Config dataclass); build a head by name (laya.heads.card saves and
loads it).

A new head is one file (the class and its Config) plus one line in `HEADS`.
"""

from __future__ import annotations

from dataclasses import dataclass

from laya.core.config import ConfigError, from_dict
from laya.heads.alf import ALF, ALFConfig
from laya.heads.aligned import AlignedLAYA, AlignedLAYAConfig
from laya.heads.attention import LAYA, JointLAYA, LAYAConfig
from laya.heads.base import LayerHead
from laya.heads.linear import Concat, LastLayer, LinearConfig
from laya.heads.probe import LayerProbes, ProbeConfig
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
    "alf": HeadType(ALF, ALFConfig),
    "probe": HeadType(LayerProbes, ProbeConfig),
}
JOINT_HEAD = "laya_joint"  # trained with its backbone by the joint protocol (laya.protocols), never from a cache
CACHE_HEADS = tuple(name for name in HEADS if name != JOINT_HEAD)  # what the train stage trains


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
