"""Layer pruning and early exit (laya.depth) on hand-set models and a tiny cache where the answer is known."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from conftest import write_feature_store
from laya import FeatureStore
from laya.backbones.config import entry
from laya.core.config import ConfigError, from_dict
from laya.depth import DepthConfig
from laya.depth.early_exit import exit_depth, flops_within, frontier_area, sweep
from laya.depth.flops import cumulative_flops
from laya.depth.pruning import kept_after, pruning_curve, random_orders, removal_order
from laya.depth.run import depth_uses
from laya.train import HeadsConfig, TrainConfig, train_heads


def test_flops_are_counted_through_each_layer_only():
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3), nn.Linear(3, 2))
    assert cumulative_flops(model, torch.zeros(1, 4), ["0", "2", "3"]) == [64, 64 + 48, 64 + 48 + 12]  # 2·in·out
    with pytest.raises(ValueError, match="no module 'blocks.9'"):
        cumulative_flops(model, torch.zeros(1, 4), ["blocks.9"])


def test_threshold_0_exits_at_the_first_head_and_one_above_1_never_exits_early():
    scores = np.array([[0.2, 0.9, 1.0], [1.0, 1.0, 1.0], [0.0, 0.1, 0.3]])
    assert exit_depth(scores, 0.0).tolist() == [0, 0, 0]
    assert exit_depth(scores, 1.01).tolist() == [2, 2, 2]
    assert exit_depth(scores, 0.5).tolist() == [1, 0, 2]  # the last head answers whatever its score
    correct = np.array([[False, True, True], [True, True, True], [False, False, True]])
    points = sweep(scores, correct, [10, 20, 40], np.array([0.0, 0.5, 1.01]))
    assert [p["accuracy"] for p in points] == pytest.approx([1 / 3, 1.0, 1.0])
    assert [p["mean_flops"] for p in points] == pytest.approx([10, (20 + 10 + 40) / 3, 40], abs=0.05)
    assert points[1]["exits"] == [1, 1, 1] and points[1]["flops_fraction"] == pytest.approx(70 / 120)
    assert flops_within(points, 1.0, 0.005) == pytest.approx(70 / 120)
    assert flops_within(points, 1.0, 0.0) == pytest.approx(70 / 120)
    # mean accuracy over the FLOPs fraction range [0.25, 1]: two trapezoids
    area = ((1 / 3 + 1) / 2 * (70 / 120 - 0.25) + (1 - 70 / 120)) / 0.75
    assert frontier_area(points) == pytest.approx(area)


def test_pruning_orders_and_curves():
    assert removal_order(np.array([0.5, 0.1, 0.4])) == [1, 2, 0]
    assert removal_order(np.array([0.2, 0.2, 0.6])) == [0, 1, 2]  # ties: the shallower layer goes first
    layers = [3, 4, 5]  # store indices
    assert kept_after([1, 2, 0], 0, layers) == (3, 4, 5)
    assert kept_after([1, 2, 0], 2, layers) == (3,)
    accuracy = {(3, 4, 5): 0.9, (3, 5): 0.88, (3,): 0.7}
    curve = pruning_curve([1, 2, 0], layers, accuracy, [10, 30, 60], ["a", "b", "c"])
    assert [p["kept"] for p in curve] == [["a", "b", "c"], ["a", "c"], ["a"]]
    assert [p["flops"] for p in curve] == [60, 60, 10]  # truncated after the deepest kept layer
    assert [p["test_accuracy"] for p in curve] == [0.9, 0.88, 0.7]
    orders = random_orders(4, 3, seed=0)
    assert len(orders) == 3 and all(sorted(o) == [0, 1, 2, 3] for o in orders) and orders == random_orders(4, 3, 0)


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """A cache whose layer1 alone carries the label; LAYA and ScalarMix trained on it."""
    tmp = tmp_path_factory.mktemp("depth")
    store = FeatureStore.open(write_feature_store(tmp / "toy.zarr", sizes={"train": 600, "val": 150, "test": 300}))
    train = TrainConfig(seeds=[0], epochs=15, lr=0.01, batch_size=32, input_dropout=0.0)
    train_heads(store, HeadsConfig(names=["scalarmix", "laya"]), train, tmp / "heads")
    return store, tmp / "heads", train


def test_pruning_the_layers_a_head_ignores_loses_nothing_and_exit_rules_cover_the_range(toy):
    store, heads_dir, train = toy
    cfg = DepthConfig(random_orders=2, loo_samples=300, epochs=15, patience=5, thresholds=11)
    flops = {"layer0": 100, "layer1": 250, "layer2": 400}
    m = depth_uses("toy", store, heads_dir, flops, cfg, HeadsConfig(names=["scalarmix", "laya"]), train)
    assert m.layers == ["layer0", "layer1", "layer2"] and m.flops == [100, 250, 400]
    pruning = m.pruning
    for ranking in ("alpha", "loo"):  # both find the one informative layer and keep it to the end
        assert pruning.orders[ranking][-1] == "layer1"
        curve = pruning.curves[ranking]
        assert curve[-1].kept == ["layer1"] and curve[-1].flops == 250
        assert curve[-1].test_accuracy >= pruning.full_accuracy - 0.03  # the ignored layers cost nothing
    assert set(pruning.curves) == {"alpha", "scalarmix", "loo", "random0", "random1"}
    exits = m.early_exit
    assert exits.prefix_accuracy[0] < 0.5 < exits.prefix_accuracy[1]  # layer0 alone is noise (3 classes)
    for rule, found in exits.rules.items():
        first, never = found.points[0], found.points[-1]
        assert first.threshold == 0 and first.exits == [300, 0, 0], rule  # threshold 0: all leave at head 1
        assert never.threshold > 1 and never.exits == [0, 0, 300], rule  # above 1: none leaves early
        assert never.accuracy == exits.full_accuracy and never.flops_fraction == 1.0
    again = depth_uses("toy", store, heads_dir, flops, cfg, HeadsConfig(names=["scalarmix", "laya"]), train)
    assert again == m  # seeded: the same numbers


@pytest.mark.parametrize("values, match", [
    ({"backbones": ["mlp"]}, r"depth: unknown key\(s\) \['backbones'\]"),  # an entry's `depth: true` now
    ({"tolerance": 1.5}, r"depth.tolerance: expected an accuracy gap in \[0, 1\)"),
    ({"thresholds": 1}, r"depth.thresholds: expected an integer ≥ 2"),
])
def test_bad_depth_params(values, match):
    with pytest.raises(ConfigError, match=match):
        from_dict(DepthConfig, values, "depth")


def test_depth_is_checked_against_the_backbone_s_heads_and_seeds():
    joint = {"backbone": {"arch": "cnn", "protocol": "joint"}, "depth": True}
    with pytest.raises(ConfigError, match=r"backbones.cnn_joint.depth: expected false for protocol joint"):
        entry({"backbones": {"cnn_joint": joint}}, "cnn_joint")
    with pytest.raises(ConfigError, match=r"depth.head: 'concat' has no layer weights"):
        DepthConfig(head="concat").check_trained(["concat", "laya"], [0], "mlp")
    with pytest.raises(ConfigError, match=r"depth.head: 'laya' is not among the heads trained for mlp \['last'\]"):
        DepthConfig().check_trained(["last"], [0], "mlp")
    with pytest.raises(ConfigError, match=r"depth.seed: 3 is not among the train seeds of mlp \[0, 1\]"):
        DepthConfig(seed=3).check_trained(["laya"], [0, 1], "mlp")
