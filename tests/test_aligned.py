"""laya_aligned: LAYA + λ·KL(softmax(e/T) ‖ α), e the head's own leave-one-layer-out effects."""

import numpy as np
import pytest
import torch

from conftest import write_feature_store
from laya.ablation import ablation_values, leave_one_out
from laya.heads import build, load, save
from laya.storage.statistics import layer_means
from laya.storage.store import FeatureStore
from laya.train import HeadsConfig, TrainConfig, train_heads

DIMS = [6, 5, 4]


def _layers(batch: int = 32, seed: int = 0) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(batch, d, generator=g) for d in DIMS]


def _head(**params):
    torch.manual_seed(0)
    head = build("laya_aligned", DIMS, 3, **params).eval()
    head.set_ablation_values([np.linspace(-1, 1, d) for d in DIMS])
    return head


def test_the_target_is_the_softmax_of_the_evaluations_loo_effects_over_t():
    head, layers = _head(align_temperature=0.2), _layers()
    values = ablation_values("mean", [np.linspace(-1, 1, d) for d in DIMS])
    effects = leave_one_out(head, layers, values).effects
    assert torch.allclose(head.alignment_target(layers), torch.softmax(effects / 0.2, dim=-1), atol=1e-6)
    zero = _head(ablation="zero")
    assert all(float(v.abs().sum()) == 0 for v in zero.ablation_values)  # zero ablation ignores the means


def test_the_aligned_loss_is_zero_when_alpha_equals_the_target_and_positive_otherwise():
    head, layers = _head(), _layers()
    alpha = head.layer_weights(layers).detach()
    assert head.alignment_loss(layers, alpha).item() == pytest.approx(0.0, abs=1e-6)
    target = torch.softmax(torch.randn(len(alpha), len(DIMS)), dim=-1)
    expected = (target * (target.log() - alpha.log())).sum(1).mean()
    assert head.alignment_loss(layers, target).item() == pytest.approx(float(expected), rel=1e-5)
    assert float(expected) > 0.01


def test_the_auxiliary_loss_is_lambda_times_kl_and_reaches_the_scorer_only_through_alpha():
    head, layers = _head(align_weight=0.3), _layers()
    loss = head.auxiliary_loss(layers)
    assert loss.item() == pytest.approx(0.3 * head.alignment_loss(layers, head.alignment_target(layers)).item())
    loss.backward()
    assert head.scorer[0].weight.grad.abs().sum() > 0 and head.classifier.weight.grad is None  # e has no gradient
    assert _head(align_weight=0.0).auxiliary_loss(layers) is None  # λ = 0 is plain LAYA


def test_the_train_stage_gives_it_the_training_means_and_they_are_saved_with_it(tmp_path):
    store = FeatureStore.open(write_feature_store(tmp_path / "toy.zarr"))
    heads = HeadsConfig.parse({"names": ["laya_aligned"], "laya_aligned": {"align_weight": 1.0}})
    train_heads(store, heads, TrainConfig(seeds=[0], epochs=2, batch_size=32), tmp_path / "heads")
    saved = load(tmp_path / "heads" / "laya_aligned" / "seed0")
    for value, mean in zip(saved.ablation_values, layer_means(store, "train", [0, 1, 2]), strict=True):
        assert np.allclose(value.numpy(), mean, atol=1e-6)
    save(saved, tmp_path / "copy")
    assert torch.equal(load(tmp_path / "copy").ablation_value_0, saved.ablation_value_0)
