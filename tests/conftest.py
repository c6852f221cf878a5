"""Shared fixtures: synthetic raw datasets, prepared stores and tiny frozen backbones built in tmp folders."""

from __future__ import annotations

import gzip
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import laya
from laya.backbones import BackboneCard, BackboneConfig, build_model, save_backbone
from laya.data import DataConfig, RawDataset, write_prepared

REPO = Path(__file__).resolve().parents[1]
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # tests never reach a model hub
UNDER_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")  # CI sets CI=true (.ci/run, fresh-clone-check)


def needs(available: bool, what: str) -> pytest.MarkDecorator:
    """A module's or test's requirement outside Python (a Debian package, a browser): skipped where it is missing,
    but failed under CI, where `make setup` must have provided it — so a green CI always ran the test."""
    if available:
        return pytest.mark.needs(what)
    if UNDER_CI:
        return pytest.mark.needs(what, missing=True)
    return pytest.mark.skipif(True, reason=f"needs {what}")


def copy_repo(dest: Path) -> None:
    """Copy the working tree's tracked and unignored files (what a clone of this commit would hold)."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, check=True,
                           capture_output=True, text=True).stdout.split("\0")
    for rel in filter(None, files):
        if (REPO / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, dest / rel)


def pipeline_repo(dest: Path, params: dict) -> dict:
    """A copy of the repo at `dest` with `params` as its params.yaml and no dvc.lock, committed to a fresh git
    repository (DVC experiments need one); the environment to run `dvc` in it."""
    import yaml

    copy_repo(dest)
    (dest / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    (dest / "dvc.lock").unlink(missing_ok=True)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"],
                ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "pipeline"]):
        run_ok(cmd, dest, env)
    return env


def run_ok(cmd: list[str], cwd: Path, env: dict) -> str:
    """Run `cmd`; its stdout, or a failure showing the end of its output."""
    result = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    assert result.returncode == 0, f"{' '.join(cmd)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result.stdout


def pytest_configure(config):
    config.addinivalue_line("markers", "needs(what): a requirement outside Python (see conftest.needs)")


def pytest_runtest_setup(item):
    for mark in item.iter_markers("needs"):
        if mark.kwargs.get("missing"):
            pytest.fail(f"CI=true and this test needs {mark.args[0]}, which is missing: `make setup` should have "
                        f"installed it", pytrace=False)


def write_idx(path: Path, array: np.ndarray, compress: bool = True) -> Path:
    """Write a uint8 array as an IDX file (magic 0x0000 08 <ndim>, big-endian sizes, payload)."""
    header = bytes([0, 0, 0x08, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    data = header + np.ascontiguousarray(array, np.uint8).tobytes()
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


def synthetic_raw(n_train: int = 200, n_test: int = 60, classes: int = 10, side: int = 28, channels: int = 1,
                  seed: int = 0) -> RawDataset:
    """Noisy images with a bright horizontal band whose position is the class, so backbones can learn."""
    rng = np.random.default_rng(seed)
    band = max(1, side // classes)

    def make(n):
        labels = np.arange(n, dtype=np.int32) % classes
        rng.shuffle(labels)
        images = rng.integers(0, 60, size=(n, side, side, channels)).astype(np.uint8)
        for i, label in enumerate(labels):
            images[i, label * band:(label + 1) * band] += 150
        return images, labels

    train_images, train_labels = make(n_train)
    test_images, test_labels = make(n_test)
    return RawDataset("synthetic", [f"class{i}" for i in range(classes)], train_images, train_labels,
                      test_images, test_labels, {"synthetic": True})


@pytest.fixture(scope="session")
def prepared_path(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("prepared") / "synthetic.zarr"
    write_prepared(synthetic_raw(), DataConfig(name="cifar10", val_fraction=0.2), out)
    return out


TINY_BACKBONES = {
    "mlp": BackboneConfig(arch="mlp", model={"hidden": [32, 16, 8]}, epochs=1),
    "cnn": BackboneConfig(arch="cnn", model={"channels": [4, 8, 8, 12], "pool_after": [0, 1, 2]}, epochs=1),
    "vit": BackboneConfig(arch="vit", model={"patch_size": 7, "embed_dim": 16, "depth": 3, "num_heads": 2},
                          epochs=1),
}


def tiny_card(arch: str, data_sha256: str, name: str | None = None) -> BackboneCard:
    """The card the backbone stage would write for a tiny backbone of `arch` (no training)."""
    return BackboneCard(name=name or arch, config=TINY_BACKBONES[arch], in_chans=1, img_size=28, num_classes=10,
                        classes=[str(i) for i in range(10)], mean=[0.5], std=[0.25], data_sha256=data_sha256,
                        laya_version=laya.__version__)


def tiny_backbone(tmp: Path, arch: str, data_sha256: str, seed: int = 0) -> Path:
    """A random-init tiny backbone saved like the backbone stage does (no training needed for extraction)."""
    torch.manual_seed(seed)
    model = build_model(TINY_BACKBONES[arch], 1, 28, 10, f"backbones.{arch}").eval()
    return save_backbone(tmp / arch, model, tiny_card(arch, data_sha256))


def write_feature_store(path: Path, dims=(6, 5, 4), sizes=None, classes: int = 3, informative: int = 1,
                        seed: int = 0, shard_rows: int = 64, codec: str = "lz4") -> Path:
    """A small feature store written like extraction writes one: per-split float16 layers, labels, attrs.

    Layer `informative` holds the label as a one-hot-ish signal plus noise; the others are pure noise."""
    import zarr

    from laya.storage.shards import ShardPlan
    from laya.storage.store_info import Fingerprint, StoreInfo
    from laya.storage.zarrio import create_sample_array

    sizes = sizes or {"train": 300, "val": 90, "test": 120}
    rng = np.random.default_rng(seed)
    root = zarr.open_group(path, mode="w")
    names = [f"layer{i}" for i in range(len(dims))]
    for split, n in sizes.items():
        labels = rng.integers(0, classes, n).astype(np.int32)
        for i, (name, d) in enumerate(zip(names, dims)):
            x = rng.normal(0, 1, (n, d))
            if i == informative:
                x[np.arange(n), labels % d] += 3.0
            create_sample_array(root, f"{split}/layers/{name}", ShardPlan(n, shard_rows), (d,), "float16", codec)[:] = x
        create_sample_array(root, f"{split}/labels", ShardPlan(n, shard_rows), (), "int32", codec)[:] = labels
    info = StoreInfo(backbone="toy", layers=names, dims=list(dims), sizes=sizes,
                     classes=[f"c{i}" for i in range(classes)], extract={"shard_size": shard_rows},
                     fingerprint=Fingerprint(backbone_sha256="b" * 64, data_sha256="d" * 64, hash="toy"))
    root.attrs.update(info.to_attrs())
    return path


@pytest.fixture(scope="session")
def s3_server():
    """A real S3 server (moto, server mode) on 127.0.0.1; this process's AWS variables point at it meanwhile."""
    from s3_server import start_s3_server

    proc, server = start_s3_server()
    saved = {k: os.environ.get(k) for k in server.env()}
    os.environ.update(server.env())
    try:
        yield server
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        proc.terminate()
        proc.wait(timeout=30)


def vit_extraction_inputs(tmp: Path, n_train: int) -> tuple[Path, Path]:
    """(prepared store, tiny random-init ViT folder) for the extraction tests: synthetic data, 10 % val."""
    from laya.data import PreparedData

    data_path = tmp / "prepared.zarr"
    write_prepared(synthetic_raw(n_train=n_train, n_test=60), DataConfig(val_fraction=0.1), data_path)
    return data_path, tiny_backbone(tmp / "bb", "vit", PreparedData(data_path).attrs["data_sha256"])


def extract_command(params: Path, data_path: Path, backbone: Path, out: str | Path, extract: dict) -> list[str]:
    """`python pipeline/extract.py …` for the tiny ViT on CPU, with `extract` written to the params file."""
    import sys

    import yaml

    params.parent.mkdir(parents=True, exist_ok=True)
    params.write_text(yaml.safe_dump({"device": "cpu", "backbones": {"vit": {"backbone": {"arch": "vit"}}},
                                      "extract": extract}))
    return [sys.executable, str(REPO / "pipeline" / "extract.py"), "--params", str(params), "--name", "vit",
            "--data", str(data_path), "--backbone", str(backbone), "--out", str(out)]


LONG_RUNS = ("tests/test_end_to_end.py", "tests/test_own_model.py")  # whole `dvc repro` runs, longest first


def pytest_collection_modifyitems(items):
    """Each whole-pipeline run at the start of one worker's share: `make test` runs `pytest -n auto --dist
    worksteal`, which hands every worker an equal consecutive share of the collection and lets idle workers steal
    the rest, so the long runs start at once on different workers while the others take every other test."""
    long = sorted((i for i in items if i.nodeid.startswith(LONG_RUNS)),
                  key=lambda i: LONG_RUNS.index(i.nodeid.split("::")[0]))
    workers, total = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")), len(items)
    items[:] = [i for i in items if not i.nodeid.startswith(LONG_RUNS)]
    for k, item in enumerate(long):  # share k opens with long run k (one worker: all of them first, in order)
        items.insert(min(k, workers - 1) * total // workers + (k if workers == 1 else 0), item)
