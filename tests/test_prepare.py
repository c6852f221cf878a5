"""The prepared store: seeded stratified split, subset, normalisation stats, atomic writing."""

import importlib
import os

import numpy as np
import pytest

from conftest import REPO, synthetic_raw
from laya.core.config import ConfigError, from_dict
from laya.data import DataConfig, PreparedData, write_prepared
from laya.data.prepare import channel_stats
from laya.storage.zarrio import create_sample_array


def test_split_is_stratified_seeded_and_disjoint(tmp_path):
    raw = synthetic_raw(n_train=200)
    cfg = DataConfig(val_fraction=0.2, seed=3)
    write_prepared(raw, cfg, tmp_path / "a.zarr")
    write_prepared(raw, cfg, tmp_path / "b.zarr")
    a, b = PreparedData(tmp_path / "a.zarr"), PreparedData(tmp_path / "b.zarr")
    assert a.attrs["data_sha256"] == b.attrs["data_sha256"]
    train_rows, val_rows = a.root["train/index"][:], a.root["val/index"][:]
    assert len(val_rows) == 40 and not set(train_rows) & set(val_rows)
    assert sorted([*train_rows, *val_rows]) == list(range(200))
    assert np.bincount(a.labels("val")).tolist() == [4] * 10
    np.testing.assert_array_equal(a.images("val"), raw.train_images[val_rows])
    np.testing.assert_array_equal(a.labels("test"), raw.test_labels)
    write_prepared(raw, DataConfig(val_fraction=0.2, seed=4), tmp_path / "c.zarr")
    assert PreparedData(tmp_path / "c.zarr").attrs["data_sha256"] != a.attrs["data_sha256"]


def test_subset_caps_every_split(tmp_path):
    write_prepared(synthetic_raw(), DataConfig(subset=25), tmp_path / "s.zarr")
    data = PreparedData(tmp_path / "s.zarr")
    assert [data.num_samples(s) for s in ("train", "val", "test")] == [25, 20, 25]


def test_channel_stats_match_numpy():
    images = np.random.default_rng(0).integers(0, 256, (50, 6, 6, 3), dtype=np.uint8)
    mean, std = channel_stats(images)
    np.testing.assert_allclose(mean, (images / 255.0).mean(axis=(0, 1, 2)), atol=1e-6)
    np.testing.assert_allclose(std, (images / 255.0).std(axis=(0, 1, 2)), atol=1e-6)


def test_failed_write_leaves_previous_output_intact(tmp_path, monkeypatch):
    out = tmp_path / "p.zarr"
    write_prepared(synthetic_raw(), DataConfig(), out)
    before = PreparedData(out).attrs["data_sha256"]
    prep = importlib.import_module("laya.data.prepare")
    calls = []

    def create_then_fail(*args, **kwargs):  # fails after some arrays are already on disk
        calls.append(1)
        if len(calls) == 4:
            raise RuntimeError("disk full")
        return create_sample_array(*args, **kwargs)

    monkeypatch.setattr(prep, "create_sample_array", create_then_fail)
    with pytest.raises(RuntimeError):
        write_prepared(synthetic_raw(seed=1), DataConfig(), out)
    assert PreparedData(out).attrs["data_sha256"] == before
    assert [p.name for p in tmp_path.iterdir()] == ["p.zarr"]


@pytest.mark.parametrize("values, match", [
    ({"nmae": "x"}, r"data: unknown key\(s\) \['nmae'\]; valid keys"),
    ({"name": "mnist"}, r"data.name: unknown value 'mnist'; valid: \['fashion_mnist', 'cifar10', 'imagefolder'\]"),
    ({"val_fraction": 1.5}, r"data.val_fraction: expected a number in \(0, 1\)"),
    ({"subset": 0}, "data.subset: expected null or a positive int"),
    ({"subset": "ten"}, "data.subset: expected an integer"),
    ({"image_size": [28]}, r"data.image_size: expected null or \[height, width\]"),
])
def test_bad_data_params_are_one_clear_line(values, match):
    with pytest.raises(ConfigError, match=match):
        from_dict(DataConfig, values, "data")


def test_missing_prepared_store_says_which_stage(tmp_path):
    with pytest.raises(ConfigError, match="run `dvc repro prepare` first"):
        PreparedData(tmp_path / "nope.zarr")


def test_a_killed_runs_temporary_folder_is_removed_by_the_next_run(tmp_path):
    import subprocess

    from laya.core.io import atomic_path

    dead = subprocess.Popen(["true"])
    dead.wait()  # a pid that no longer runs
    final = tmp_path / "heads"
    litter = tmp_path / f".heads.tmp-{dead.pid}"
    (litter / "laya").mkdir(parents=True)
    alive = tmp_path / f".heads.tmp-{os.getppid()}"  # a live process's build in progress: left alone
    alive.mkdir()
    keep = tmp_path / ".other.tmp-1"  # another output's: not ours to remove
    keep.mkdir()
    with atomic_path(final) as tmp:
        tmp.mkdir()
    assert final.is_dir() and not litter.exists() and keep.exists() and alive.exists()
    ignored = subprocess.run(["git", "check-ignore", "-q", "data/heads/.mlp.tmp-123"], cwd=REPO)
    assert ignored.returncode == 0  # git ignores what a killed run leaves
