"""Datasets: raw loaders (Fashion-MNIST IDX, CIFAR-10 pickles, ImageFolder) and the prepared store."""

from laya.data.config import DATASETS, DataConfig, dataset_title
from laya.data.prepare import SPLITS, PreparedData, load_raw, prepare, write_prepared
from laya.data.raw import RawDataset

__all__ = ["DATASETS", "SPLITS", "DataConfig", "PreparedData", "RawDataset", "dataset_title", "load_raw", "prepare",
           "write_prepared"]
