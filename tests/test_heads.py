"""Heads: the shared verb set for every registered head, and LAYA/ScalarMix against numpy re-computations."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

import laya.heads
from laya.core.config import ConfigError
from laya.heads import HEADS, HeadCard, build, load, load_with_card, parse_config, save

DIMS = [5, 7, 3]


def _layers(batch=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(batch, d, generator=g) for d in DIMS]


@pytest.mark.parametrize("name", sorted(HEADS))
def test_every_head_shapes_weights_and_roundtrip(name, tmp_path):
    torch.manual_seed(0)
    head = build(name, DIMS, num_classes=6).eval()
    assert isinstance(head.config, HEADS[name].config)
    layers = _layers()
    logits = head(layers)
    assert logits.shape == (4, 6)
    weights = head.layer_weights(layers)
    if name in ("last", "concat", "probe"):
        assert weights is None
    else:
        assert weights.shape == (4, len(DIMS))
        torch.testing.assert_close(weights.sum(1), torch.ones(4))
        assert (weights >= 0).all()
    card = save(head, tmp_path / name, seed=0)
    loaded, loaded_card = load_with_card(tmp_path / name)
    torch.testing.assert_close(loaded(layers), logits)
    assert loaded_card == card == HeadCard.load(tmp_path / name)  # the card round-trips
    assert card.seed == 0 and card.name == name and loaded.config == head.config
    with pytest.raises(ValueError, match="expects 3 layers"):
        head(layers[:2])


def _set_linear(linear, rng):
    linear.weight.data = torch.tensor(rng.normal(size=linear.weight.shape), dtype=torch.float32)
    linear.bias.data = torch.tensor(rng.normal(size=linear.bias.shape), dtype=torch.float32)
    return linear.weight.data.numpy().astype(np.float64), linear.bias.data.numpy().astype(np.float64)


def _gelu(x):
    from scipy.special import erf

    return 0.5 * x * (1 + erf(x / np.sqrt(2)))


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def test_laya_equals_numpy():
    rng = np.random.default_rng(1)
    head = build("laya", DIMS, num_classes=4, d_star=6, tau=0.7, scorer_hidden=9).eval()
    adapters = [_set_linear(g, rng) for g in head.adapters.projections]
    s1, s2 = _set_linear(head.scorer[0], rng), _set_linear(head.scorer[2], rng)
    cls = _set_linear(head.classifier, rng)
    layers = _layers(batch=5, seed=3)
    h = [t.numpy().astype(np.float64) for t in layers]
    z = np.stack([x @ w.T + b for x, (w, b) in zip(h, adapters)], 1)  # (B, L, d*)
    scores = _gelu(z.reshape(5, -1) @ s1[0].T + s1[1]) @ s2[0].T + s2[1]  # (B, L)
    alpha = _softmax(scores / 0.7)
    logits = np.einsum("bl,bld->bd", alpha, z) @ cls[0].T + cls[1]
    np.testing.assert_allclose(head.layer_weights(layers).detach().numpy(), alpha, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(head(layers).detach().numpy(), logits, rtol=1e-4, atol=1e-4)


def test_scalarmix_equals_numpy():
    rng = np.random.default_rng(2)
    head = build("scalarmix", DIMS, num_classes=4, d_star=6).eval()
    adapters = [_set_linear(g, rng) for g in head.adapters.projections]
    cls = _set_linear(head.classifier, rng)
    head.scalars.data = torch.tensor([0.5, -1.0, 2.0])
    head.gamma.data = torch.tensor(1.7)
    layers = _layers(batch=5, seed=4)
    z = np.stack([t.numpy() @ w.T + b for t, (w, b) in zip(layers, adapters)], 1)
    weights = _softmax(np.array([0.5, -1.0, 2.0]))
    logits = (1.7 * np.einsum("l,bld->bd", weights, z)) @ cls[0].T + cls[1]
    np.testing.assert_allclose(head(layers).detach().numpy(), logits, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(head.layer_weights(layers).detach().numpy(), np.tile(weights, (5, 1)), rtol=1e-5)


def test_scalarmix_starts_uniform_with_unit_scale():
    head = build("scalarmix", DIMS, 10)
    torch.testing.assert_close(head.layer_weights(_layers())[0], torch.full((3,), 1 / 3))
    assert float(head.gamma.detach()) == 1.0


def test_small_tau_makes_alpha_one_hot():
    torch.manual_seed(0)
    head = build("laya", DIMS, 10, tau=1e-4).eval()
    alpha = head.layer_weights(_layers(batch=16))
    assert torch.allclose(alpha.max(1).values, torch.ones(16), atol=1e-4)
    warm = build("laya", DIMS, 10, tau=100.0).eval()
    assert warm.layer_weights(_layers(batch=16)).max() < 0.4  # large τ: close to uniform 1/3


def test_psi_mlp_is_shared_across_layers():
    head = build("laya", DIMS, 10, psi="mlp", d_star=8)
    assert isinstance(head.psi, torch.nn.Sequential) and head.psi[0].in_features == 8
    assert head(_layers()).shape == (4, 10)


@pytest.mark.parametrize("name, params, match", [
    ("lstm", {}, r"unknown head 'lstm'; valid: \['alf', 'concat', 'last', 'laya', 'laya_aligned', 'laya_joint', "
                 r"'probe', 'scalarmix'\]"),
    ("laya", {"tau": 0}, r"heads.laya.tau: expected a positive number, got 0"),
    ("laya", {"tau": -1.5}, r"heads.laya.tau"),
    ("laya", {"tau": "abc"}, r"heads.laya.tau: expected a number, got 'abc'"),
    ("laya", {"d_star": 0}, r"heads.laya.d_star: expected a positive integer"),
    ("laya", {"d_star": 9.5}, r"heads.laya.d_star: expected an integer"),
    ("scalarmix", {"d_star": -3}, r"heads.scalarmix.d_star"),
    ("laya", {"psi": "relu"}, r"heads.laya.psi: unknown value 'relu'; valid: \['identity', 'mlp'\]"),
    ("laya", {"temperature": 1.0}, r"heads.laya: unknown key\(s\) \['temperature'\]"),
    ("last", {"d_star": 4}, r"heads.last: unknown key\(s\) \['d_star'\]"),
    ("laya_aligned", {"align_weight": -0.1}, r"heads.laya_aligned.align_weight: expected a number ≥ 0"),
    ("laya_aligned", {"align_temperature": 0}, r"heads.laya_aligned.align_temperature: expected a positive number"),
    ("laya_aligned", {"ablation": "noise"}, r"heads.laya_aligned.ablation: unknown value 'noise'"),
])
def test_bad_head_params_name_the_key(name, params, match):
    with pytest.raises(ConfigError, match=match):
        build(name, DIMS, 10, **params)


def test_load_refuses_weights_of_another_shape(tmp_path):
    from dataclasses import replace

    from laya.core.io import sha256_file

    path = tmp_path / "h"
    save(build("laya", DIMS, 10), path)
    save(build("laya", [5, 7, 4], 10), tmp_path / "other")
    (path / "model.safetensors").write_bytes((tmp_path / "other" / "model.safetensors").read_bytes())
    with pytest.raises(ConfigError, match=r"h/model.safetensors: SHA-256 .* differs .*dvc repro train@"):
        load(path)
    replace(HeadCard.load(path), weights_sha256=sha256_file(path / "model.safetensors")).save(path)
    with pytest.raises(ConfigError, match="weights do not fit the head"):
        load(path)


def test_public_api():
    assert set(laya.heads.__all__) >= {"build", "load", "save", "HEADS"}


def test_alf_attends_over_the_layers_and_every_parameter_learns():
    """ALF (Ciernik et al. 2026): its attention over the layers is a distribution per input, and the loss reaches the
    query, the layer embeddings, every projection and the classifier."""
    torch.manual_seed(0)
    dims = [6, 9, 4]
    head = build("alf", dims, 5, width=16, num_heads=4)
    layers = [torch.randn(8, d) for d in dims]
    weights = head.layer_weights(layers)
    assert weights.shape == (8, 3) and torch.allclose(weights.sum(1), torch.ones(8)) and (weights >= 0).all()
    torch.nn.functional.cross_entropy(head(layers), torch.arange(8) % 5).backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in head.parameters())
    assert head(layers).shape == (8, 5)


def test_alf_refuses_a_width_its_heads_do_not_divide():
    with pytest.raises(ConfigError, match="heads.alf.num_heads"):
        parse_config("alf", {"width": 10, "num_heads": 4})


def test_per_layer_probes_read_their_own_layer_and_train_as_if_alone():
    """Probe i's logits depend on layer i only; the forward is the mean of the probes' log-probabilities; trained
    side by side (mean of the L cross-entropies), probe i ends where a LastLayer head trained on layer i alone ends
    (Adam is invariant to the 1/L scale of its gradient, up to its ε)."""
    from laya.train.loop import adam, train_epoch

    torch.manual_seed(0)
    probes = build("probe", DIMS, num_classes=6)
    layers = [t.requires_grad_(True) for t in _layers(batch=8)]
    per_layer = probes.layer_logits(layers)
    assert per_layer.shape == (8, 3, 6) and probes.training_logits(layers).shape == (8, 3, 6)
    grads = torch.autograd.grad(per_layer[:, 1].sum(), layers)
    assert grads[0].abs().sum() == 0 and grads[2].abs().sum() == 0 and grads[1].abs().sum() > 0
    torch.testing.assert_close(probes(layers), torch.log_softmax(per_layer, -1).mean(1))

    g = torch.Generator().manual_seed(1)
    batches = [([torch.randn(16, d, generator=g) for d in DIMS], torch.randint(0, 6, (16,), generator=g))
               for _ in range(20)]
    alone = build("last", DIMS[1:2], num_classes=6)
    alone.classifier.load_state_dict(probes.probes[1].state_dict())
    loss_fn = nn.CrossEntropyLoss()
    train_epoch(probes, adam(probes, 0.01), loss_fn, batches)
    train_epoch(alone, adam(alone, 0.01), loss_fn, [([feats[1]], y) for feats, y in batches])
    torch.testing.assert_close(probes.probes[1].weight, alone.classifier.weight, atol=1e-5, rtol=1e-4)
    assert not torch.allclose(probes.probes[1].weight, probes.probes[0].weight[:, :1].expand(-1, 7))
