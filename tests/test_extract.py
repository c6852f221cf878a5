"""Extraction to the feature store: equals an independent forward pass, resumes bit-identically, reads back."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from conftest import REPO, synthetic_raw, tiny_backbone
from laya import FeatureStore
from laya.backbones import load_backbone
from laya.core.config import ConfigError, from_dict
from laya.data import DataConfig, PreparedData, write_prepared
from laya.extract import ExtractConfig, extract_features

CPU = torch.device("cpu")
SMALL = ExtractConfig(batch_size=16, shard_size=64, patch_tokens=3)


def _extract(tmp_path, arch, data_path, cfg=SMALL, out_name=None, **kwargs):
    data = PreparedData(data_path)
    model, meta = load_backbone(tiny_backbone(tmp_path / "bb", arch, data.attrs["data_sha256"]))
    out = tmp_path / (out_name or f"{arch}.zarr")
    return extract_features(model, meta, data, out, cfg, CPU, **kwargs), out, model, meta, data


@torch.no_grad()
def _reference(model, arch, x):
    """An independent forward pass: per-layer pooled outputs (+ ViT MLP inputs/outputs per block)."""
    if arch == "mlp":
        h, layers = x.flatten(1), []
        for block in model.blocks:
            h = block(h)
            layers.append(h)
        return layers, None, None
    if arch == "cnn":
        h, layers = x, []
        for block in model.blocks:
            h = block(h)
            layers.append(h.mean(dim=(2, 3)))
        return layers, None, None
    h = model.norm_pre(model._pos_embed(model.patch_embed(x)))
    layers, mlp_in, mlp_out = [], [], []
    for block in model.blocks:
        h = h + block.ls1(block.attn(block.norm1(h)))
        mlp_in.append(block.norm2(h))
        mlp_out.append(block.mlp(mlp_in[-1]))
        h = h + block.ls2(mlp_out[-1])
        layers.append(h[:, 0])
    return layers, torch.stack(mlp_in, 2), torch.stack(mlp_out, 2)  # (B, T, L, d)


@pytest.mark.parametrize("arch", ["mlp", "cnn", "vit"])
def test_store_equals_an_in_memory_forward(tmp_path, prepared_path, arch):
    summary, out, model, meta, data = _extract(tmp_path, arch, prepared_path)
    store = FeatureStore.open(out)
    prep = meta.preprocess()
    for split in ("train", "val", "test"):
        x = prep(torch.from_numpy(data.images(split)))
        layers, mlp_in, mlp_out = _reference(model, arch, x)
        assert store.num_samples(split) == len(x)
        np.testing.assert_array_equal(store.labels(split), data.labels(split))
        np.testing.assert_array_equal(store.array(split, "index")[:], data.root[f"{split}/index"][:])
        for name, ref in zip(store.layers, layers):
            got = store.array(split, f"layers/{name}")[:]
            assert got.dtype == np.float16
            np.testing.assert_allclose(got.astype(np.float32), ref.numpy(), rtol=2e-3, atol=2e-3)
        if arch == "vit":
            picks = store.array(split, "patch_index")[:].astype(np.int64)
            assert picks.shape == (len(x), 3) and (np.diff(picks, axis=1) > 0).all()
            for key, ref in (("mlp_in", mlp_in), ("mlp_out", mlp_out)):
                np.testing.assert_allclose(store.array(split, f"{key}_cls")[:].astype(np.float32), ref[:, 0].numpy(),
                                           rtol=2e-3, atol=2e-3)
                tokens = ref.numpy()[np.arange(len(x))[:, None], picks + 1]  # +1 skips the CLS token
                np.testing.assert_allclose(store.array(split, f"{key}_patch")[:].astype(np.float32), tokens,
                                           rtol=2e-3, atol=2e-3)
    assert store.attrs["mlp_io"] is (arch == "vit")
    assert store.dims == [int(t.shape[1]) for t in layers]


def test_store_holds_few_files_thanks_to_sharding(tmp_path, prepared_path):
    summary, out, *_ = _extract(tmp_path, "vit", prepared_path, cfg=replace(SMALL, shard_size=1024))
    shard_files = [p for p in out.rglob("*") if p.is_file() and "c" in p.relative_to(out).parts]
    arrays = len(FeatureStore.open(out).layers) + 7  # layers + labels, index, 4 mlp_io arrays, patch_index
    assert len(shard_files) == 3 * arrays  # one shard per array per split


def test_batches_visit_every_sample_once_chunkwise(tmp_path, prepared_path):
    _, out, *_ = _extract(tmp_path, "mlp", prepared_path, cfg=replace(SMALL, dtype="float32"))
    store = FeatureStore.open(out)
    full = [store.array("train", f"layers/{n}")[:] for n in store.layers]
    for shuffle in (False, True):
        batches = list(store.batches("train", 7, shuffle=shuffle, seed=1, window_blocks=2))
        assert all(len(b[1]) <= 7 for b in batches)
        got = np.concatenate([b[0][0].numpy() for b in batches])
        order = np.lexsort(got.T)
        np.testing.assert_array_equal(got[order], full[0][np.lexsort(full[0].T)])  # same rows, once each
        labels = np.concatenate([b[1].numpy() for b in batches])
        assert sorted(labels.tolist()) == sorted(store.labels("train").tolist())
    first = [b[1] for b in store.batches("train", 7, shuffle=True, seed=1)]
    again = [b[1] for b in store.batches("train", 7, shuffle=True, seed=1)]
    other = [b[1] for b in store.batches("train", 7, shuffle=True, seed=2)]
    assert all(torch.equal(a, b) for a, b in zip(first, again))
    assert not all(torch.equal(a, b) for a, b in zip(first, other))
    picked = next(store.batches("test", 5, layers=[-1]))[0]
    assert len(picked) == 1 and picked[0].shape == (5, store.dims[-1])


def _tree_bytes(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


class Interrupt(Exception):
    pass


def test_resume_after_interrupt_is_bit_identical(tmp_path, prepared_path):
    _, clean, *_ = _extract(tmp_path / "clean", "vit", prepared_path)
    written = []

    def crash_after_three(split, shard):
        written.append((split, shard))
        if len(written) == 3:
            raise Interrupt

    with pytest.raises(Interrupt):
        _extract(tmp_path / "run", "vit", prepared_path, on_shard_written=crash_after_three)
    out = tmp_path / "run" / "vit.zarr"
    assert not out.exists()  # nothing under the final name until complete
    summary, *_ = _extract(tmp_path / "run", "vit", prepared_path)
    assert summary["resumed_shards"] == 3
    assert _tree_bytes(out) == _tree_bytes(clean)
    assert not (tmp_path / "run" / ".partial" / "vit.zarr").exists()


def test_changed_spec_does_not_resume_stale_work(tmp_path, prepared_path):
    with pytest.raises(Interrupt):
        _extract(tmp_path, "mlp", prepared_path, on_shard_written=lambda *_: (_ for _ in ()).throw(Interrupt))
    summary, out, *_ = _extract(tmp_path, "mlp", prepared_path, cfg=replace(SMALL, dtype="float32"))
    assert summary["resumed_shards"] == 0 and FeatureStore.open(out).attrs["extract"]["dtype"] == "float32"


def test_killed_process_resumes_to_the_same_store(tmp_path):
    data_path = tmp_path / "prepared.zarr"
    write_prepared(synthetic_raw(n_train=600, n_test=100), DataConfig(val_fraction=0.1), data_path)
    data = PreparedData(data_path)
    backbone = tiny_backbone(tmp_path / "bb", "cnn", data.attrs["data_sha256"])
    cfg = ExtractConfig(batch_size=2, shard_size=64)
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({"device": "cpu", "backbones": {"cnn": {"backbone": {"arch": "cnn"}}},
                                     "extract": {"batch_size": 2, "shard_size": 64, "procs": 1}}))
    out = tmp_path / "killed" / "cnn.zarr"
    cmd = [sys.executable, str(REPO / "pipeline" / "extract.py"), "--params", str(params), "--name", "cnn",
           "--data", str(data_path), "--backbone", str(backbone), "--out", str(out)]
    progress = out.parent / ".partial" / "cnn.zarr.progress"
    proc = subprocess.Popen(cmd, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline and proc.poll() is None:
        if progress.is_dir() and any(p.name.startswith("train.") for p in progress.iterdir()):
            break
        time.sleep(0.01)
    assert proc.poll() is None, "extraction finished before it could be killed; make the workload larger"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not out.exists()
    resumed = subprocess.run(cmd, capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    assert "resumed" in resumed.stdout
    model, meta = load_backbone(backbone)
    extract_features(model, meta, data, tmp_path / "clean" / "cnn.zarr", cfg.for_backbone(False), CPU)
    assert _tree_bytes(out) == _tree_bytes(tmp_path / "clean" / "cnn.zarr")


def test_stale_cache_is_refused_with_the_fix(tmp_path, prepared_path):
    _, out, _, meta, _ = _extract(tmp_path, "mlp", prepared_path)
    store = FeatureStore.open(out)
    store.check_fingerprint(backbone_sha256=meta.weights_sha256)
    store.check_built_from(meta)
    with pytest.raises(ConfigError, match=r"stale feature cache \(backbone_sha256.*dvc repro extract@mlp"):
        store.check_fingerprint(backbone_sha256="0" * 64)


def test_swapped_stores_name_the_stage_that_rebuilds_the_expected_one(tmp_path, prepared_path):
    """The mlp's store where the cnn's should be: the fix is to rebuild the cnn's (extract@cnn), not the mlp's."""
    _, out, _, _, data = _extract(tmp_path, "mlp", prepared_path)
    cnn = load_backbone(tiny_backbone(tmp_path / "other", "cnn", data.attrs["data_sha256"]))[1]
    with pytest.raises(ConfigError, match=r"backbone: cache 'mlp' vs expected 'cnn'.*dvc repro extract@cnn`"):
        FeatureStore.open(out).check_built_from(cnn)


def test_float16_overflow_is_caught(tmp_path, prepared_path):
    data = PreparedData(prepared_path)
    model, meta = load_backbone(tiny_backbone(tmp_path / "bb", "vit", data.attrs["data_sha256"]))
    model.blocks[0].mlp.fc2.weight.data *= 1e9
    with pytest.raises(ConfigError, match="overflows to inf/nan; set extract.dtype: float32"):
        extract_features(model, meta, data, tmp_path / "o.zarr", SMALL, CPU)
    assert not (tmp_path / "o.zarr").exists()


def test_more_patch_tokens_than_the_vit_has_is_an_error(tmp_path, prepared_path):
    with pytest.raises(ConfigError, match=r"extract.patch_tokens: 99 > the 16 patch tokens"):
        _extract(tmp_path, "vit", prepared_path, cfg=replace(SMALL, patch_tokens=99))


def test_open_refuses_what_is_not_a_store(tmp_path):
    with pytest.raises(ConfigError, match="no feature store here; run `dvc repro extract@<backbone>`"):
        FeatureStore.open(tmp_path / "missing.zarr")


def test_store_info_round_trips_and_a_prepared_store_is_not_a_feature_store(tmp_path, prepared_path):
    from laya.storage.store_info import StoreInfo

    summary, out, _, card, data = _extract(tmp_path, "mlp", prepared_path)
    store = FeatureStore.open(out)
    info = store.info
    assert StoreInfo.from_attrs(info.to_attrs(), "x") == info and info.to_attrs() == store.attrs
    assert info.backbone == "mlp" and info.fingerprint.backbone_sha256 == card.weights_sha256
    assert info.fingerprint.hash == summary["fingerprint"] and info.shard_size == SMALL.shard_size
    plan = store.shard_plan("train")
    assert plan.count == -(-data.num_samples("train") // SMALL.shard_size)
    assert sum(plan.rows(i) for i in plan) == data.num_samples("train")
    with pytest.raises(ConfigError, match=r"synthetic.zarr: not a laya feature store \(attrs \['layers', 'dims'"):
        FeatureStore.open(prepared_path)


def test_mlp_io_auto_caches_the_transcoder_inputs_for_the_clt_backbone_only(tmp_path, prepared_path, capsys):
    auto = ExtractConfig(batch_size=16, shard_size=64, patch_tokens=3)
    assert auto.mlp_io == "auto"
    assert auto.for_backbone(True).mlp_io is True and auto.for_backbone(False).mlp_io is False
    assert replace(auto, mlp_io=True).for_backbone(False).mlp_io is True  # an explicit choice stands
    _, out, *_ = _extract(tmp_path, "vit", prepared_path, cfg=auto.for_backbone(False))
    store = FeatureStore.open(out)
    assert not store.attrs["mlp_io"] and store.attrs["extract"]["mlp_io"] is False  # never "auto" in a store
    plan = capsys.readouterr().out
    assert "→ " in plan and "to write" in plan and "token arrays" not in plan  # no MLP inputs/outputs
    with pytest.raises(ConfigError, match=r"extract.mlp_io: expected auto, true or false, got 'yes'"):
        from_dict(ExtractConfig, {"mlp_io": "yes"}, "extract")
