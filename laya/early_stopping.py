"""Early stopping on a validation score: keep the best epoch's weights, stop after `patience` epochs without one."""

from __future__ import annotations

import copy

from torch import nn


def reached_cap(epochs_run: int, best_epoch: int, epochs: int, patience: int) -> bool:
    """Did a run end at its epoch cap, with early stopping not (yet) ending it? Then it had not converged: its
    val accuracy improved within the last `patience` epochs."""
    return epochs_run >= epochs and epochs_run - best_epoch < patience


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
