"""Feature stores on S3 (a real S3 server on loopback, tests/s3_server.py): extraction writes and resumes there,
reading gives what a local copy gives, and a missing bucket or a refused key is one clear line."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import s3fs
import torch
import yaml

from conftest import extract_command, vit_extraction_inputs
from laya.backbones import load_backbone
from laya.core.config import ConfigError
from laya.core.params import load_params
from laya.data import PreparedData
from laya.extract import ExtractConfig, extract_features
from laya.storage.store import FeatureStore

EXTRACT = {"batch_size": 8, "shard_size": 32, "patch_tokens": 3, "mlp_io": True}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Prepared data (9 shards of 32), a tiny ViT and its store on the local disk."""
    tmp = tmp_path_factory.mktemp("s3")
    data_path, backbone = vit_extraction_inputs(tmp, n_train=200)
    local = tmp / "local" / "vit.zarr"
    _extract(data_path, backbone, local)
    return tmp, data_path, backbone, local


def _extract(data_path: Path, backbone: Path, out: str | Path, **kwargs) -> dict:
    model, card = load_backbone(backbone)
    return extract_features(model, card, PreparedData(data_path), out, ExtractConfig(**EXTRACT), torch.device("cpu"),
                            **kwargs)


def _command(tmp: Path, data_path: Path, backbone: Path, out: str, **extract) -> list[str]:
    return extract_command(tmp / "params-s3.yaml", data_path, backbone, out, {**EXTRACT, **extract})


def _local_tree(path: Path) -> dict[str, bytes]:
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def _s3_tree(url: str) -> dict[str, bytes]:
    fs = s3fs.S3FileSystem(skip_instance_cache=True)
    root = url.removeprefix("s3://")
    return {key[len(root) + 1:]: fs.cat_file(key) for key in sorted(fs.find(root))}


def test_two_ranks_write_the_store_to_s3_byte_for_byte(built, s3_server):
    tmp, data_path, backbone, local = built
    url = s3_server.url("features", "vit.zarr")
    run = subprocess.run(_command(tmp, data_path, backbone, url, procs=2), capture_output=True, text=True,
                         cwd=tmp)  # a URL mistaken for a path would land in tmp, not in the repo
    assert run.returncode == 0, run.stderr
    assert f"→ {url}" in run.stdout and "per process on 2" in run.stdout  # the plan names the target
    assert _s3_tree(url) == _local_tree(local)  # every chunk and metadata object
    assert _s3_tree(s3_server.url("features", ".partial")) == {}  # nothing left where it was built


def test_reading_from_s3_gives_what_the_local_copy_gives(built, s3_server):
    _, data_path, backbone, local = built
    url = s3_server.url("read", "vit.zarr")
    _extract(data_path, backbone, url)
    remote, here = FeatureStore.open(url), FeatureStore.open(local)
    assert remote.path == url and remote.attrs == here.attrs
    assert pickle.loads(pickle.dumps(remote)).path == url  # how a worker process reopens it
    np.testing.assert_array_equal(remote.labels("test"), here.labels("test"))
    for (xs, y), (xl, yl) in zip(remote.batches("train", 16, shuffle=True, seed=3),
                                 here.batches("train", 16, shuffle=True, seed=3), strict=True):
        assert torch.equal(y, yl) and all(torch.equal(a, b) for a, b in zip(xs, xl))


def test_an_interrupted_build_on_s3_resumes_from_its_finished_shards(built, s3_server):
    _, data_path, backbone, local = built
    url = s3_server.url("resume", "vit.zarr")

    written = []

    def stop_after_three(split, shard):
        written.append((split, shard))
        if len(written) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _extract(data_path, backbone, url, on_shard_written=stop_after_three)
    assert _s3_tree(url) == {}  # nothing under the final name
    summary = _extract(data_path, backbone, url)
    assert summary["resumed_shards"] == 3
    assert _s3_tree(url) == _local_tree(local)


@pytest.mark.parametrize("case, message", [
    ("bucket", "bucket 'no-such-bucket' does not exist; create it"),
    ("key", "the object store refused access"),
])
def test_a_missing_bucket_or_a_refused_key_is_one_line(built, s3_server, case, message):
    tmp, data_path, backbone, _ = built
    url = "s3://no-such-bucket/features/vit.zarr" if case == "bucket" else s3_server.url("refused", "vit.zarr")
    env = {**os.environ, **(s3_server.env(key="AKIAWRONGKEY0000") if case == "key" else {})}
    run = subprocess.run(_command(tmp, data_path, backbone, url), capture_output=True, text=True, env=env, cwd=tmp)
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and url in lines[0], run.stderr
    assert _s3_tree(s3_server.url("refused")) == {}
    env_read = subprocess.run([sys.executable, "-c", "from laya.core.cli import run\n"
                               f"from laya.storage.store import FeatureStore\n"
                               f"run(lambda: FeatureStore.open({url!r}))"], capture_output=True, text=True, env=env,
                              cwd=tmp)
    assert env_read.returncode == 2 and len(env_read.stderr.strip().splitlines()) == 1, env_read.stderr


def test_credentials_in_params_are_refused(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({"storage": {"s3": {"endpoint_url": "http://127.0.0.1:9", "secret": "x"}}}))
    with pytest.raises(ConfigError, match=r"params storage.s3.secret: credentials never go in params.yaml"):
        load_params(params)
