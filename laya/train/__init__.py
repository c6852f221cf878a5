"""Training heads from a feature store (no backbone in memory): configs, the loop, and the whole stage's run.

Names are imported on first use, so a stage that only needs the configs or the loop (depth, sanity) does not
import — and its DVC stage does not depend on — the train stage's own work (laya.train.run).
"""

import importlib

_LAZY = {"HeadsConfig": "laya.train.config", "TrainConfig": "laya.train.config", "FitResult": "laya.train.loop",
         "Predictions": "laya.train.loop", "fit_head": "laya.train.loop", "moving_average": "laya.train.loop",
         "predict": "laya.train.loop", "train_epoch": "laya.train.loop", "train_heads": "laya.train.run",
         "train_units": "laya.train.run", "write_curves": "laya.train.run"}
__all__ = sorted(_LAZY)


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'laya.train' has no attribute {name!r}")
