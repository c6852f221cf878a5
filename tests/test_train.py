"""Training heads from a feature cache: the loader, reproducibility, the stage script and its bad inputs."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest
import torch
import yaml

from conftest import REPO, tiny_card, write_feature_store
from laya import FeatureStore
from laya.core.config import ConfigError, from_dict
from laya.early_stopping import reached_cap
from laya.heads import HeadCard
from laya.records.train import TrainRecord
from laya.settings import resolve
from laya.train import HeadsConfig, TrainConfig, moving_average, train_heads
from laya.train.dropout import InputDropout, uniform_uint16
from laya.train.loop import mix

QUICK = TrainConfig(seeds=[0, 1], epochs=8, patience=3, batch_size=32, lr=0.01, ema=0.9)  # ~100 steps


@pytest.fixture(scope="module")
def store_path(tmp_path_factory):
    return write_feature_store(tmp_path_factory.mktemp("store") / "toy.zarr")


@pytest.mark.parametrize("memory", [0, 1 << 30])
def test_shuffled_batches_visit_every_sample_once_per_epoch(store_path, memory):
    store = FeatureStore.open(store_path)
    store.keep_in_memory(memory)
    rows = {}
    for epoch in range(2):
        seen = [np.concatenate([f.numpy() for f in feats], 1)
                for feats, _ in store.batches("train", 32, shuffle=True, seed=epoch, window_blocks=2)]
        rows[epoch] = np.concatenate(seen)
        assert len(rows[epoch]) == 300
        assert len(np.unique(rows[epoch], axis=0)) == 300  # every row exactly once
    assert not np.array_equal(rows[0], rows[1])  # a new order each epoch
    full = np.concatenate([store.array("train", f"layers/{n}")[:] for n in store.layers], 1).astype(np.float32)
    np.testing.assert_array_equal(np.sort(rows[0], axis=0), np.sort(full, axis=0))


def test_memory_keeps_the_same_batches(store_path):
    cold, warm = FeatureStore.open(store_path), FeatureStore.open(store_path)
    warm.keep_in_memory(1 << 30)
    for _ in range(2):  # the second pass is served from memory
        for (a, ya), (b, yb) in zip(cold.batches("train", 50, shuffle=True, seed=3),
                                    warm.batches("train", 50, shuffle=True, seed=3)):
            assert all(torch.equal(x, y) for x, y in zip(a, b)) and torch.equal(ya, yb)


def test_same_seed_same_metrics_and_heads_learn(store_path, tmp_path):
    store = FeatureStore.open(store_path)
    first = TrainRecord.of(train_heads(store, HeadsConfig(), QUICK, tmp_path / "a"))
    second = TrainRecord.of(train_heads(FeatureStore.open(store_path), HeadsConfig(), QUICK, tmp_path / "b"))
    assert first == second
    assert first.accuracy["laya"].mean > 0.8  # the label is in layer 1: chance is 1/3
    assert set(first.accuracy["laya"].seeds) == {"s0", "s1"}
    card = HeadCard.load(tmp_path / "a" / "laya" / "seed1")
    assert card.seed == 1 and card.layers == ["layer0", "layer1", "layer2"] and card.backbone == "toy"
    assert round(card.test_accuracy, 6) == first.accuracy["laya"].seeds["s1"]
    assert card.cache_fingerprint == store.fingerprint.hash


def test_layer_subset(store_path, tmp_path):
    heads = HeadsConfig(names=["last"], layers=[1])
    metrics = TrainRecord.of(train_heads(FeatureStore.open(store_path), heads, QUICK, tmp_path / "h"))
    assert metrics.accuracy["last"].mean > 0.8  # reads the informative layer only
    assert HeadCard.load(tmp_path / "h" / "last" / "seed0").layers == ["layer1"]


def test_layer_index_not_in_store(store_path, tmp_path):
    with pytest.raises(ConfigError, match=r"layer index \[7\] not in store .* use indices 0..2"):
        train_heads(FeatureStore.open(store_path), HeadsConfig(layers=[0, 7]), QUICK, tmp_path / "h")
    assert not (tmp_path / "h").exists()


@pytest.mark.parametrize("section, values, match", [
    (HeadsConfig, {"names": ["laya", "mlp"]}, r"heads.names: unknown head\(s\) \['mlp'\]"),
    (HeadsConfig, {"lr": 1}, r"heads: unknown key\(s\) \['lr'\]"),
    (HeadsConfig, {"laya": {"tau": "abc"}}, r"heads.laya.tau: expected a number, got 'abc'"),
    (HeadsConfig, {"laya": {"temperature": 2}}, r"heads.laya: unknown key\(s\) \['temperature'\]"),
    (HeadsConfig, {"scalarmix": {"d_star": 0}}, r"heads.scalarmix.d_star: expected a positive integer"),
    (TrainConfig, {"seeds": []}, r"train.seeds: expected a non-empty list"),
    (TrainConfig, {"epochs": 0}, r"train.epochs: expected a positive integer"),
    (TrainConfig, {"lr": "fast"}, r"train.lr: expected a number"),
    (TrainConfig, {"ema": 1.0}, r"train.ema: expected a number in \[0, 1\) \(0 = off\), got 1.0"),
    (TrainConfig, {"mixup": -0.2}, r"train.mixup: expected a number ≥ 0"),
    (TrainConfig, {"overrides": {"mlp": {"mixup": -1}}}, r"train: unknown key\(s\) \['overrides'\]"),
])
def test_bad_config(section, values, match):
    with pytest.raises(ConfigError, match=match):
        HeadsConfig.parse(values) if section is HeadsConfig else from_dict(section, values, "train")


def test_a_backbone_s_train_keys_apply_to_its_heads_only():
    params = {"backbones": {"mlp": {"backbone": {"arch": "mlp"}, "train": {"mixup": 0.4, "lr": 0.001}},
                            "cnn": {"backbone": {"arch": "cnn"}}},
              "heads": {}, "train": {"lr": 0.01, "epochs": 7}}
    mlp, cnn = resolve(params, "mlp").train, resolve(params, "cnn").train
    assert (mlp.mixup, mlp.lr, mlp.epochs) == (0.4, 0.001, 7)
    assert cnn == from_dict(TrainConfig, params["train"], "train")
    with pytest.raises(ConfigError, match=r"backbones.mlp.train.mixup: expected a number ≥ 0"):
        resolve({**params, "backbones": {"mlp": {"backbone": {}, "train": {"mixup": -1}}}}, "mlp")


def test_mixup_mixes_every_layer_and_the_labels_alike():
    x = torch.arange(12.0).reshape(6, 2)
    feats, y = [x, 3 * x], torch.arange(6)
    mixed, y_a, y_b, lam = mix(feats, y, 0.4, np.random.default_rng(0))
    assert 0 < lam < 1 and torch.equal(y_a, y) and not torch.equal(y_b, y)
    torch.testing.assert_close(mixed[1], 3 * mixed[0])  # one λ and one pairing for all layers
    torch.testing.assert_close(mixed[0], lam * x + (1 - lam) * x[y_b])  # y = row index, so y_b is the pairing


def test_input_dropout_drops_p_keeps_the_mean_and_repeats_with_its_generator():
    feats = [torch.ones(400, 500), torch.full((400, 100), -2.0)]
    dropped = InputDropout(0.2, np.random.default_rng(3))(feats)
    for f, d in zip(feats, dropped):
        kept = d != 0
        assert abs(1 - kept.float().mean().item() - 0.2) < 0.005  # 200,000 and 40,000 draws
        assert torch.equal(d[kept], f[kept] * 65536 / (65536 - 13107))  # round(0.2 · 2¹⁶) = 13107 levels dropped
        assert abs(d.mean().item() - f[0, 0].item()) < 0.01 * abs(f[0, 0].item())
    again = InputDropout(0.2, np.random.default_rng(3))(feats)
    assert all(torch.equal(a, b) for a, b in zip(dropped, again))
    other = InputDropout(0.2, np.random.default_rng(4))(feats)
    assert not torch.equal(dropped[0], other[0])
    assert InputDropout(0.0, np.random.default_rng(3))(feats) is feats


@pytest.mark.parametrize("shape", [(256, 384), (240, 96), (3, 5), (2, 2), (5,)])
def test_fast_uint16_draws_are_numpys_integers_bit_for_bit_and_leave_the_same_state(shape):
    fast, slow = np.random.default_rng(7), np.random.default_rng(7)
    for _ in range(3):
        assert np.array_equal(uniform_uint16(fast, shape), slow.integers(0, 1 << 16, shape, dtype=np.uint16))
        for rng in (fast, slow):  # mixup's permutation draws 32-bit halves and may leave one buffered
            rng.permutation(255)
    assert np.array_equal(fast.integers(0, 1 << 16, 3, dtype=np.uint16), slow.integers(0, 1 << 16, 3, dtype=np.uint16))
    assert fast.random() == slow.random()


def test_moving_average_follows_the_recursion():
    head = torch.nn.Linear(1, 1, bias=False)
    average = moving_average(head, decay=0.75)
    for value, expected in [(4.0, 4.0), (8.0, 5.0), (1.0, 4.0), (8.0, 5.0)]:  # first copies, then ¾·θ̄ + ¼·θ
        head.weight.data.fill_(value)
        average.update_parameters(head)
        assert average.module.weight.item() == pytest.approx(expected)
    assert moving_average(head, decay=0.0) is None


TOY_BACKBONE = {"backbones": {"toy": {"backbone": {"arch": "mlp"}}}}  # the frozen protocol


def _stage(tmp_path, store_path, backbone_sha, params):
    (tmp_path / "params.yaml").write_text(yaml.safe_dump({**TOY_BACKBONE, **params}))
    (tmp_path / "backbone").mkdir()
    replace(tiny_card("mlp", "d" * 64, name="toy"), weights_sha256=backbone_sha).save(tmp_path / "backbone")
    return subprocess.run(
        [sys.executable, "pipeline/train.py", "--params", str(tmp_path / "params.yaml"), "--name", "toy",
         "--features", str(store_path), "--backbone", str(tmp_path / "backbone"),
         "--out", str(tmp_path / "heads"), "--metrics", str(tmp_path / "m.json"), "--curves", str(tmp_path / "c")],
        cwd=REPO, capture_output=True, text=True)


def test_train_stage_writes_heads_metrics_and_curves(tmp_path, store_path):
    params = {"device": "cpu", "heads": {"names": ["last", "laya"], "laya": {"tau": 1.0}},
              "train": {"seeds": [0, 1], "epochs": 3, "batch_size": 64, "ema": 0.99}}
    done = _stage(tmp_path, store_path, "b" * 64, params)
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "train@toy: train.ema 0.99 averages over ~100 steps" in warnings[0], done.stderr
    metrics = json.loads((tmp_path / "m.json").read_text())
    assert set(metrics["accuracy"]) == {"last", "laya"} and "mean" in metrics["macro_f1"]["laya"]
    assert metrics["capped"] == {"last": [0, 1], "laya": [0, 1]}  # 3 epochs < patience 5: no run could converge
    assert "best epoch 3/3 (stopped at train.epochs: not converged)" in done.stdout
    assert (tmp_path / "heads" / "laya" / "seed0" / "model.safetensors").is_file()
    curve = (tmp_path / "c" / "laya.csv").read_text().splitlines()
    assert curve[0] == "seed,epoch,train_loss,train_acc,val_loss,val_acc" and len(curve) == 7
    assert [row.split(",")[:2] for row in curve[1::3]] == [["0", "1"], ["1", "1"]]  # every seed, epoch by epoch
    assert HeadCard.load(tmp_path / "heads" / "laya" / "seed0").params["tau"] == 1.0


@pytest.mark.parametrize("sha, params, match", [
    ("0" * 64, {"heads": {}, "train": {}}, "stale feature cache (backbone_sha256"),
    ("b" * 64, {"heads": {"laya": {"tau": -1}}, "train": {}}, "heads.laya.tau: expected a positive number"),
    ("b" * 64, {"heads": {"names": ["lasst"]}, "train": {}}, "heads.names: unknown head(s) ['lasst']"),
])
def test_train_stage_bad_input_is_one_line(tmp_path, store_path, sha, params, match):
    done = _stage(tmp_path, store_path, sha, params)
    assert done.returncode == 2
    assert match in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "heads").exists() and not (tmp_path / "m.json").exists()


@pytest.mark.parametrize("codec", ["lz4", "none"])
def test_a_damaged_cache_chunk_is_one_line_naming_store_array_and_fix(tmp_path, codec):
    path = write_feature_store(tmp_path / "toy.zarr", codec=codec)
    shard = next(p for p in sorted((path / "train" / "layers" / "layer1").rglob("*")) if p.is_file()
                 and p.name != "zarr.json")
    shard.write_bytes(shard.read_bytes()[: shard.stat().st_size // 2])  # a truncated shard
    store = FeatureStore.open(path)
    with pytest.raises(ConfigError, match=r"toy.zarr: array 'train/layers/layer1' is damaged .*`dvc checkout .*"
                                          r"`dvc repro -f extract@toy`") as err:
        list(store.batches("train", 64))
    assert "\n" not in str(err.value)


def test_a_stage_whose_parent_is_killed_exits_and_leaves_no_temporary_output(tmp_path, store_path):
    import os
    import signal
    import time

    (tmp_path / "params.yaml").write_text(yaml.safe_dump(
        {**TOY_BACKBONE, "device": "cpu", "heads": {"names": ["laya"]},
         "train": {"seeds": [0], "epochs": 100000, "patience": 100000}}))
    (tmp_path / "backbone").mkdir()
    replace(tiny_card("mlp", "d" * 64, name="toy"), weights_sha256="b" * 64).save(tmp_path / "backbone")
    stage = [sys.executable, "pipeline/train.py", "--params", str(tmp_path / "params.yaml"), "--name", "toy",
             "--features", str(store_path), "--backbone", str(tmp_path / "backbone"), "--out",
             str(tmp_path / "heads"), "--metrics", str(tmp_path / "m.json"), "--curves", str(tmp_path / "c")]
    parent = subprocess.Popen([sys.executable, "-c", "import subprocess, sys; child = subprocess.Popen(sys.argv[1:]); "
                               "print(child.pid, flush=True); child.wait()", *stage],
                              cwd=REPO, stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    deadline = time.time() + 60
    while not list(tmp_path.glob(".heads.tmp-*")) and time.time() < deadline:  # training has started
        time.sleep(0.1)
    assert list(tmp_path.glob(".heads.tmp-*")), "the stage never started writing"
    os.kill(parent.pid, signal.SIGKILL)  # like `kill -9` of `dvc repro`
    parent.wait()
    for _ in range(100):
        if not os.path.exists(f"/proc/{child}") or open(f"/proc/{child}/stat").read().split()[2] == "Z":
            break
        time.sleep(0.1)
    else:
        pytest.fail("the stage kept running after its parent was killed")
    assert not list(tmp_path.glob(".heads.tmp-*")) and not (tmp_path / "heads").exists()


@pytest.mark.parametrize("ema, epochs, samples, warned", [
    (0.0, 2, 400, None),
    (0.999, 2, 400, "2 epochs of 400 samples are 4 steps: 100% of the kept weights stay those of the first step"),
    (0.9, 2, 400, "4 steps: 73% of the kept weights"),  # 0.9³
    (0.9, 10, 400, None),  # 0.9¹⁹ = 0.14
    (0.999, 60, 54000, None),  # the default mlp: 12,720 steps
])
def test_a_moving_average_too_long_for_the_run_is_named(ema, epochs, samples, warned):
    from laya.train.loop import short_average_warning

    found = short_average_warning(TrainConfig(epochs=epochs, batch_size=256, ema=ema), samples, "train@mlp")
    assert found == warned if warned is None else warned in found and found.startswith("warning: train@mlp: ")


@pytest.mark.parametrize("run, best, capped", [(10, 10, True), (10, 7, True), (10, 5, False), (8, 3, False)])
def test_a_run_is_capped_when_it_reaches_the_epoch_limit_still_improving(run, best, capped):
    """epochs 10, patience 5: early stopping ends a run 5 epochs after its best; reaching 10 sooner is the cap."""
    assert reached_cap(run, best, epochs=10, patience=5) is capped
