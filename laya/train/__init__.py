"""Training heads from a feature store (no backbone in memory): configs, the loop, and the whole stage's run."""

from laya.train.config import HeadsConfig, TrainConfig
from laya.train.loop import FitResult, Predictions, fit_head, moving_average, predict, train_epoch
from laya.train.run import train_heads, train_units, write_curves

__all__ = ["FitResult", "HeadsConfig", "Predictions", "TrainConfig", "fit_head", "moving_average", "predict",
           "train_epoch", "train_heads", "train_units", "write_curves"]
