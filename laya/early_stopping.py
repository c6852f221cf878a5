"""Early stopping on a validation score: keep the best epoch's weights, stop after `patience` epochs without one."""

from __future__ import annotations

import copy

from torch import nn


class EarlyStopping:
    """`step(epoch, score, module) -> True when training should stop`; `restore(module)` loads the best weights.

    A score counts as better only when strictly greater, so ties keep the earlier epoch."""

    def __init__(self, patience: int):
        self.patience = patience
        self.best_score = float("-inf")
        self.best_epoch = 0
        self._state: dict | None = None

    def step(self, epoch: int, score: float, module: nn.Module) -> bool:
        if score > self.best_score:
            self.best_score, self.best_epoch = score, epoch
            self._state = copy.deepcopy(module.state_dict())
            return False
        return epoch - self.best_epoch >= self.patience

    def restore(self, module: nn.Module) -> None:
        assert self._state is not None, "restore() before any step()"
        module.load_state_dict(self._state)
