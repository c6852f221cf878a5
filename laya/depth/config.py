"""Params section `depth` (stages depth@<name>, run for the entries with `depth: true`): which trained head's α
ranks the layers, the recipe of the heads retrained on layer subsets, and the early-exit sweep."""

from __future__ import annotations

from dataclasses import dataclass

from laya.core.config import ConfigError, require

RANKED_BY = ("alpha", "scalarmix", "loo")  # the pruning rankings besides the random orders


@dataclass(frozen=True)
class DepthConfig:
    head: str = "laya"  # the trained head whose mean α over the training split ranks the layers
    seed: int = 0  # its trained seed; also the seed of the retrained heads and of the random orders
    random_orders: int = 3  # random pruning orders (the floor)
    loo_samples: int = 5000  # first training rows whose mean leave-one-layer-out effect ranks the layers
    epochs: int = 5  # retrained heads (one per kept-layer set): at most this many epochs…
    patience: int = 3  # …with early stopping on val accuracy
    thresholds: int = 101  # early-exit thresholds, evenly spaced on [0, 1] (plus one above 1: never exit early)
    tolerance: float = 0.005  # report the FLOPs an exit rule needs to stay within this of full accuracy

    def validate(self, key: str) -> None:
        require(self.random_orders >= 1, f"{key}.random_orders", self.random_orders, "an integer ≥ 1")
        require(self.loo_samples > 0, f"{key}.loo_samples", self.loo_samples, "a positive integer")
        require(self.epochs >= 1, f"{key}.epochs", self.epochs, "an integer ≥ 1")
        require(self.patience >= 1, f"{key}.patience", self.patience, "an integer ≥ 1")
        require(self.thresholds >= 2, f"{key}.thresholds", self.thresholds, "an integer ≥ 2")
        require(0 <= self.tolerance < 1, f"{key}.tolerance", self.tolerance, "an accuracy gap in [0, 1)")

    def check_trained(self, heads: list[str], seeds: list[int], backbone: str, key: str = "depth") -> None:
        """The ranking head is trained for `backbone` (its heads) with the seed (its train seeds) and has layer
        weights."""
        from laya.evaluate.config import has_layer_weights

        if self.head not in heads:
            raise ConfigError(f"{key}.head: {self.head!r} is not among the heads trained for {backbone} {heads}; add "
                              f"it to heads.names or pick one of them.")
        if not has_layer_weights(self.head):
            raise ConfigError(f"{key}.head: {self.head!r} has no layer weights of its own to rank layers by; use "
                              f"laya (or another head with α).")
        if self.seed not in seeds:
            raise ConfigError(f"{key}.seed: {self.seed} is not among the train seeds of {backbone} {seeds}; pick a "
                              f"trained seed.")
