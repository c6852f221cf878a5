"""CIFAR-10 pickles and ImageFolder trees, on tiny files the tests create."""

import os
import pickle

import numpy as np
import pytest
from PIL import Image

from laya.core.config import ConfigError
from laya.data.cifar10 import TEST_BATCH, TRAIN_BATCHES, load_cifar10
from laya.data.imagefolder import load_imagefolder


def _cifar_root(tmp_path, per_batch=4):
    rng = np.random.default_rng(0)
    expected = {}
    for name in TRAIN_BATCHES + [TEST_BATCH]:
        data = rng.integers(0, 256, (per_batch, 3072), dtype=np.uint8)
        labels = rng.integers(0, 10, per_batch).tolist()
        expected[name] = (data, labels)
        with open(tmp_path / name, "wb") as fh:
            pickle.dump({b"batch_label": name.encode(), b"labels": labels, b"data": data}, fh, protocol=2)
    with open(tmp_path / "batches.meta", "wb") as fh:
        pickle.dump({b"label_names": [f"c{i}".encode() for i in range(10)]}, fh, protocol=2)
    return tmp_path, expected


def test_cifar10_loads_channels_last_images_and_labels(tmp_path):
    root, expected = _cifar_root(tmp_path)
    raw = load_cifar10(str(root))
    assert raw.train_images.shape == (20, 32, 32, 3) and raw.test_images.shape == (4, 32, 32, 3)
    first = expected["data_batch_1"][0][0]
    np.testing.assert_array_equal(raw.train_images[0, :, :, 0], first[:1024].reshape(32, 32))  # red plane
    np.testing.assert_array_equal(raw.train_images[0, :, :, 2], first[2048:].reshape(32, 32))  # blue plane
    assert raw.test_labels.tolist() == expected[TEST_BATCH][1]
    assert raw.classes == [f"c{i}" for i in range(10)]


class _Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned > /dev/null",))


def test_cifar10_refuses_pickles_that_would_run_code(tmp_path):
    root, _ = _cifar_root(tmp_path)
    with open(root / "data_batch_3", "wb") as fh:
        pickle.dump({b"data": _Evil(), b"labels": []}, fh)
    with pytest.raises(ConfigError, match="data_batch_3: not a valid CIFAR-10 batch.*not allowed"):
        load_cifar10(str(root))


def test_cifar10_missing_batch_is_named(tmp_path):
    root, _ = _cifar_root(tmp_path)
    (root / "data_batch_5").unlink()
    with pytest.raises(ConfigError, match="data_batch_5: CIFAR-10 batch not found"):
        load_cifar10(str(root))


def _png(path, value, size=(10, 12)):
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.full((*size, 3), value, np.uint8)).save(path)


def test_imagefolder_resizes_and_splits_per_class(tmp_path):
    for c, value in (("cats", 10), ("dogs", 200)):
        for i in range(5):
            _png(tmp_path / c / f"{i}.png", value)
    raw = load_imagefolder(str(tmp_path), [8, 6], channels=3, test_fraction=0.4, seed=0)
    assert raw.classes == ["cats", "dogs"]
    assert raw.train_images.shape == (6, 8, 6, 3) and raw.test_images.shape == (4, 8, 6, 3)
    assert np.bincount(raw.test_labels).tolist() == [2, 2]
    cats = raw.train_images[raw.train_labels == 0]
    assert (cats == 10).all()  # a constant image stays constant through the resize


def test_imagefolder_uses_train_test_folders_and_grayscale(tmp_path):
    for split, n in (("train", 3), ("test", 2)):
        for c in ("a", "b"):
            for i in range(n):
                _png(tmp_path / split / c / f"{i}.png", 128)
    raw = load_imagefolder(str(tmp_path), [4, 4], channels=1, test_fraction=0.5, seed=0)
    assert raw.train_images.shape == (6, 4, 4, 1) and raw.test_images.shape == (4, 4, 4, 1)


def test_imagefolder_keeps_the_native_size_when_image_size_is_null(tmp_path):
    for c in ("a", "b"):
        for i in range(2):
            _png(tmp_path / c / f"{i}.png", 7)
    raw = load_imagefolder(str(tmp_path), None, 3, 0.5, 0)
    assert raw.train_images.shape[1:] == (10, 12, 3) and raw.test_images.shape[1:] == (10, 12, 3)


def test_imagefolder_bad_image_and_mixed_sizes_are_clear(tmp_path):
    _png(tmp_path / "a" / "0.png", 1)
    _png(tmp_path / "b" / "0.png", 2)
    _png(tmp_path / "b" / "2.png", 2, size=(9, 9))
    with pytest.raises(ConfigError, match=r"9×9 pixels, but .* is 10×12 and data.image_size is null"):
        load_imagefolder(str(tmp_path), None, 3, 0.5, 0)
    (tmp_path / "b" / "2.png").unlink()
    (tmp_path / "b" / "1.png").write_bytes(b"garbage")
    with pytest.raises(ConfigError, match="1.png: cannot decode image"):
        load_imagefolder(str(tmp_path), [4, 4], 3, 0.5, 0)
