"""CIFAR-10 from the standard python-pickle batches folder (`cifar-10-batches-py`).

The batches are pickles; we never unpickle them freely. A restricted unpickler admits only the handful of
numpy globals that the official files reference, so a tampered file cannot run code.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np

from laya.core.config import ConfigError
from laya.data.raw import RawDataset

TRAIN_BATCHES = [f"data_batch_{i}" for i in range(1, 6)]
TEST_BATCH = "test_batch"
DEFAULT_CLASSES = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]
_ALLOWED = {
    ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
    ("numpy", "ndarray"), ("numpy", "dtype"), ("copyreg", "_reconstructor"), ("builtins", "object"),
    ("_codecs", "encode"),  # how protocol-2 pickles written by Python 3 store bytes
}  # fmt: skip


class _NumpyOnlyUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        if (module, name) not in _ALLOWED:
            raise pickle.UnpicklingError(f"global {module}.{name} is not allowed in a CIFAR batch")
        return super().find_class(module, name)


def _load_batch(path: Path) -> dict:
    if not path.is_file():
        raise ConfigError(f"{path}: CIFAR-10 batch not found; data.root must be the `cifar-10-batches-py` "
                          f"folder holding {TRAIN_BATCHES + [TEST_BATCH]}.")
    try:
        with open(path, "rb") as fh:
            batch = _NumpyOnlyUnpickler(fh, encoding="bytes").load()
        return {k.decode() if isinstance(k, bytes) else k: v for k, v in batch.items()}
    except Exception as err:
        raise ConfigError(f"{path}: not a valid CIFAR-10 batch ({err}); re-extract the archive.") from None


def _images_labels(batches: list[dict], paths: list[Path]) -> tuple[np.ndarray, np.ndarray]:
    images, labels = [], []
    for batch, path in zip(batches, paths):
        data = np.asarray(batch.get("data"))
        if data.ndim != 2 or data.shape[1] != 3072 or data.dtype != np.uint8:
            raise ConfigError(f"{path}: 'data' must be uint8 (N, 3072), got {data.dtype} {data.shape}.")
        images.append(data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1))
        labels.append(np.asarray(batch.get("labels"), dtype=np.int32))
    return np.ascontiguousarray(np.concatenate(images)), np.concatenate(labels)


def load_cifar10(root: str | None) -> RawDataset:
    if not root:
        raise ConfigError("data.root: CIFAR-10 needs data.root set to the `cifar-10-batches-py` folder.")
    root_path = Path(root)
    train_paths = [root_path / name for name in TRAIN_BATCHES]
    test_paths = [root_path / TEST_BATCH]
    train_images, train_labels = _images_labels([_load_batch(p) for p in train_paths], train_paths)
    test_images, test_labels = _images_labels([_load_batch(p) for p in test_paths], test_paths)
    classes = DEFAULT_CLASSES
    meta = root_path / "batches.meta"
    if meta.is_file():
        names = _load_batch(meta).get("label_names")
        if names:
            classes = [n.decode() if isinstance(n, bytes) else str(n) for n in names]
    return RawDataset("cifar10", classes, train_images, train_labels, test_images, test_labels,
                      {"root": str(root_path)})
