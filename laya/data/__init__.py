"""Datasets: raw loaders (Fashion-MNIST IDX, CIFAR-10 pickles, ImageFolder) and the prepared store."""

from laya.data.config import DATASETS, DataConfig
from laya.data.prepare import SPLITS, PreparedData, load_raw, prepare, write_prepared
from laya.data.raw import RawDataset

__all__ = ["DATASETS", "SPLITS", "DataConfig", "PreparedData", "RawDataset", "load_raw", "prepare", "write_prepared"]
