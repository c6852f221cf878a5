"""Params section `depth`: which backbones, which trained head's α ranks the layers, the recipe of the heads
retrained on layer subsets, and the early-exit sweep."""

from __future__ import annotations

from dataclasses import dataclass, field

from laya.config import ConfigError, require

RANKED_BY = ("alpha", "scalarmix", "loo")  # the pruning rankings besides the random orders


@dataclass(frozen=True)
class DepthConfig:
    backbones: list[str] = field(default_factory=lambda: ["mlp", "cnn", "vit"])  # stages depth@<name>
    head: str = "laya"  # the trained head whose mean α over the training split ranks the layers
    seed: int = 0  # its trained seed; also the seed of the retrained heads and of the random orders
    random_orders: int = 3  # random pruning orders (the floor)
    loo_samples: int = 5000  # first training rows whose mean leave-one-layer-out effect ranks the layers
    epochs: int = 5  # retrained heads (one per kept-layer set): at most this many epochs…
    patience: int = 3  # …with early stopping on val accuracy
    thresholds: int = 101  # early-exit thresholds, evenly spaced on [0, 1] (plus one above 1: never exit early)
    tolerance: float = 0.005  # report the FLOPs an exit rule needs to stay within this of full accuracy

    def validate(self, key: str) -> None:
        require(len(self.backbones) > 0 and len(set(self.backbones)) == len(self.backbones), f"{key}.backbones",
                self.backbones, "a non-empty list of distinct `backbones` keys")
        require(self.random_orders >= 1, f"{key}.random_orders", self.random_orders, "an integer ≥ 1")
        require(self.loo_samples > 0, f"{key}.loo_samples", self.loo_samples, "a positive integer")
        require(self.epochs >= 1, f"{key}.epochs", self.epochs, "an integer ≥ 1")
        require(self.patience >= 1, f"{key}.patience", self.patience, "an integer ≥ 1")
        require(self.thresholds >= 2, f"{key}.thresholds", self.thresholds, "an integer ≥ 2")
        require(0 <= self.tolerance < 1, f"{key}.tolerance", self.tolerance, "an accuracy gap in [0, 1)")

    def check_trained(self, heads: list[str], seeds: list[int], key: str = "depth") -> None:
        """The ranking head is trained (heads.names) with the seed (train.seeds) and has layer weights."""
        from laya.evaluate.config import has_layer_weights

        if self.head not in heads:
            raise ConfigError(f"{key}.head: {self.head!r} is not among heads.names {heads}; add it there or pick "
                              f"one of them.")
        if not has_layer_weights(self.head):
            raise ConfigError(f"{key}.head: {self.head!r} has no layer weights of its own to rank layers by; use "
                              f"laya (or another head with α).")
        if self.seed not in seeds:
            raise ConfigError(f"{key}.seed: {self.seed} is not among train.seeds {seeds}; pick a trained seed.")

    def check_backbones(self, backbones: dict, key: str = "depth") -> None:
        """Every listed backbone exists in params `backbones` and is frozen (its cache is what heads train on)."""
        unknown = [b for b in self.backbones if b not in backbones]
        if unknown:
            raise ConfigError(f"{key}.backbones: {unknown} not in params `backbones` {sorted(backbones)}; rename or "
                              f"remove them.")
        joint = [b for b in self.backbones if (backbones[b] or {}).get("protocol") == "joint"]
        if joint:
            raise ConfigError(f"{key}.backbones: {joint} are trained jointly with their head (protocol joint); "
                              f"pruning and early exit retrain heads on a frozen backbone's cache — list frozen "
                              f"or transfer backbones.")
