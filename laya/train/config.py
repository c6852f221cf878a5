"""Params sections `heads` (which heads, on which layers, with which hyper-parameters) and `train`."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

from laya.core.config import ConfigError, from_dict, require
from laya.heads import CACHE_HEADS, JOINT_HEAD, parse_config


@dataclass(frozen=True)
class HeadsConfig:
    """params `heads`: which heads, on which layers, and each head's typed Config (sections `heads.<name>`)."""

    names: list[str] = field(default_factory=lambda: ["last", "concat", "scalarmix", "laya", "alf", "probe"])  # trained
    # for every backbone (an entry's own heads are added to these)
    layers: list[int] | None = None  # indices into the store's layers (negative from the end); null = all
    configs: dict[str, Any] = field(default_factory=dict)  # head name → its Config; absent = the Config defaults

    @classmethod
    def parse(cls, values: dict[str, Any] | None, key: str = "heads") -> HeadsConfig:
        """From the params section: `names`, `layers`, and one section per registered head, each parsed by that
        head's Config (so an unknown or bad key is an error naming `heads.<name>.<key>`)."""
        values = dict(values or {})
        unknown = sorted(set(values) - {"names", "layers"} - set(CACHE_HEADS))
        if unknown:
            raise ConfigError(f"{key}: unknown key(s) {unknown}; valid: ['names', 'layers'] and one section per head "
                              f"{sorted(CACHE_HEADS)} (a backbone's own heads: backbones.<name>.heads).")
        configs = {name: parse_config(name, values.pop(name), f"{key}.{name}") for name in list(values)
                   if name in CACHE_HEADS}
        return from_dict(cls, {**values, "configs": configs}, key)

    def validate(self, key: str) -> None:
        _check_names(self.names, f"{key}.names")
        require(self.layers is None or len(self.layers) > 0, f"{key}.layers", self.layers, "null or a non-empty list")

    def with_extra(self, extra: list[str], key: str) -> HeadsConfig:
        """These heads plus a backbone's own `extra` ones (backbones.<name>.heads: an expensive head only where it
        is studied)."""
        if not extra:
            return self
        _check_names(extra, key)
        twice = sorted(set(extra) & set(self.names))
        if twice:
            raise ConfigError(f"{key}: {twice} are already in heads.names; remove them here.")
        return replace(self, names=[*self.names, *extra])

    def config(self, name: str):
        """The typed Config of head `name`."""
        return self.configs.get(name) or parse_config(name, {})

    def to_dict(self) -> dict[str, Any]:
        """As in params.yaml: names, layers and every registered head's section (defaults filled in)."""
        return {"names": list(self.names), "layers": self.layers,
                **{name: asdict(self.config(name)) for name in CACHE_HEADS}}


def _check_names(names: list[str], key: str) -> None:
    joint = [n for n in names if n == JOINT_HEAD]
    if joint:
        raise ConfigError(f"{key}: {joint} are trained together with their backbone (a `backbones` entry with "
                          f"protocol: joint), not from a cache; remove them from {key}.")
    unknown = [n for n in names if n not in CACHE_HEADS]
    if unknown or not names:
        raise ConfigError(f"{key}: unknown head(s) {unknown or '(empty list)'}; valid: {sorted(CACHE_HEADS)}.")
    require(len(set(names)) == len(names), key, names, "each head once")


@dataclass(frozen=True)
class TrainConfig:
    seeds: list[int] = field(default_factory=lambda: [0, 1, 2])  # one head per seed; metrics are means over them
    epochs: int = 100  # upper bound: early stopping on val accuracy ends a run (the report marks one that reached it)
    patience: int = 5  # epochs without a better val accuracy before stopping (best weights are kept)
    batch_size: int = 256  # cached samples per step
    lr: float = 3e-4  # Adam's learning rate
    weight_decay: float = 0.0  # Adam's weight decay (L2)
    input_dropout: float = 0.2  # training only: dropout on the layer activations the head reads
    label_smoothing: float = 0.0  # cross-entropy label smoothing; 0 = off
    mixup: float = 0.0  # Beta(a, a) mixup of pairs of samples' activations and labels; 0 = off
    ema: float = 0.0  # decay of the weights' exponential moving average, which is validated and kept; 0 = off
    window_blocks: int = 4  # read blocks shuffled together: larger mixes better, costs memory
    memory_mb: int = 2048  # keep a split's decoded blocks in memory across epochs when it fits this budget

    def validate(self, key: str) -> None:
        require(len(self.seeds) > 0 and len(set(self.seeds)) == len(self.seeds), f"{key}.seeds", self.seeds,
                "a non-empty list of distinct integers")
        for name in ("epochs", "batch_size", "window_blocks"):
            require(getattr(self, name) > 0, f"{key}.{name}", getattr(self, name), "a positive integer")
        require(self.patience >= 1, f"{key}.patience", self.patience, "an integer ≥ 1")
        require(self.lr > 0, f"{key}.lr", self.lr, "a positive number")
        require(self.weight_decay >= 0, f"{key}.weight_decay", self.weight_decay, "a number ≥ 0")
        require(0 <= self.input_dropout < 1, f"{key}.input_dropout", self.input_dropout, "a number in [0, 1)")
        require(0 <= self.label_smoothing < 1, f"{key}.label_smoothing", self.label_smoothing, "a number in [0, 1)")
        require(self.mixup >= 0, f"{key}.mixup", self.mixup, "a number ≥ 0 (0 = off)")
        require(0 <= self.ema < 1, f"{key}.ema", self.ema, "a number in [0, 1) (0 = off)")
        require(self.memory_mb >= 0, f"{key}.memory_mb", self.memory_mb, "an integer ≥ 0 (0 = always read)")

    def overridden(self, changes: dict[str, Any], key: str) -> TrainConfig:
        """This recipe with a backbone's own train keys applied (backbones.<name>.train), each checked as a train
        key, and the result validated as a whole."""
        coerced = from_dict(TrainConfig, changes, key)
        merged = replace(self, **{k: getattr(coerced, k) for k in changes})
        merged.validate(key)
        return merged
