"""Fashion-MNIST IDX loading and verification (synthetic files, plus the real Debian copy when installed)."""

import numpy as np
import pytest

from conftest import needs, write_idx
from laya.core.config import ConfigError
from laya.data import fashion_mnist as fm


def test_parse_idx_roundtrip(tmp_path):
    images = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4)
    path = write_idx(tmp_path / "x-idx3-ubyte.gz", images)
    np.testing.assert_array_equal(fm.parse_idx(fm.read_idx_file(path)), images)
    plain = write_idx(tmp_path / "y-idx1-ubyte", np.array([9, 0, 3], np.uint8), compress=False)
    np.testing.assert_array_equal(fm.parse_idx(fm.read_idx_file(plain)), [9, 0, 3])


def test_parse_idx_rejects_bad_magic_and_truncation():
    with pytest.raises(ConfigError, match="not an IDX file"):
        fm.parse_idx(b"\x01\x02\x03\x04rest")
    with pytest.raises(ConfigError, match="truncated"):
        fm.parse_idx(bytes([0, 0, 8, 1]) + (5).to_bytes(4, "big") + b"\x00\x01")


def test_corrupt_gzip_names_the_file(tmp_path):
    bad = tmp_path / "train-images-idx3-ubyte.gz"
    bad.write_bytes(b"not gzip at all")
    with pytest.raises(ConfigError, match="train-images-idx3-ubyte.gz: cannot read"):
        fm.read_idx_file(bad)


def _fake_root(tmp_path):
    write_idx(tmp_path / "train-images-idx3-ubyte.gz", np.zeros((20, 28, 28), np.uint8))
    write_idx(tmp_path / "train-labels-idx1-ubyte.gz", np.arange(20, dtype=np.uint8) % 10)
    write_idx(tmp_path / "t10k-images-idx3-ubyte.gz", np.zeros((10, 28, 28), np.uint8))
    write_idx(tmp_path / "t10k-labels-idx1-ubyte.gz", np.arange(10, dtype=np.uint8))
    return tmp_path


def test_wrong_files_fail_verification_with_the_path(tmp_path):
    root = _fake_root(tmp_path)
    with pytest.raises(ConfigError, match=r"train-images-idx3-ubyte.gz: does not match Fashion-MNIST"):
        fm.load_fashion_mnist(str(root), tmp_path / "dl", allow_download=False)
    raw = fm.load_fashion_mnist(str(root), tmp_path / "dl", allow_download=False, verify=False)
    assert raw.train_images.shape == (20, 28, 28, 1) and raw.test_labels.tolist() == list(range(10))


def test_missing_file_under_data_root_is_named(tmp_path):
    root = _fake_root(tmp_path)
    (root / "t10k-labels-idx1-ubyte.gz").unlink()
    with pytest.raises(ConfigError, match="data.root=.*no t10k-labels-idx1-ubyte"):
        fm.load_fashion_mnist(str(root), tmp_path / "dl", allow_download=False, verify=False)


def test_no_local_copy_and_download_off_says_how_to_fix(tmp_path, monkeypatch):
    monkeypatch.setattr(fm, "DEBIAN_ROOT", tmp_path / "nothing-here")
    with pytest.raises(ConfigError, match="apt-get install dataset-fashion-mnist"):
        fm.load_fashion_mnist(None, tmp_path / "dl", allow_download=False)


@needs((fm.DEBIAN_ROOT / "train-labels-idx1-ubyte.gz").is_file(),
       f"Debian's dataset-fashion-mnist under {fm.DEBIAN_ROOT} (make setup installs it)")
def test_real_debian_copy_verifies_and_matches_known_facts(tmp_path):
    raw = fm.load_fashion_mnist(None, tmp_path / "dl", allow_download=False)
    assert raw.train_images.shape == (60000, 28, 28, 1) and raw.test_images.shape == (10000, 28, 28, 1)
    assert raw.train_labels[:10].tolist() == [9, 0, 0, 3, 0, 2, 7, 2, 5, 5]
    assert np.bincount(raw.train_labels).tolist() == [6000] * 10
    assert np.bincount(raw.test_labels).tolist() == [1000] * 10
