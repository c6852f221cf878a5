"""Cross-layer transcoders: causality, the sparse activations, metrics on known data, the replacement ViT wired
right (a hand-set CLT that reproduces linear stand-in MLPs leaves the logits unchanged), bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from laya.backbones import BackboneConfig, build_model
from laya.clt import CLTConfig, CrossLayerTranscoder, Tokens, contribution_shares, load_clt, load_tokens, save_clt
from laya.clt.activations import JumpReLU, TopK
from laya.clt.card import CLTCard
from laya.clt.contributions import mean_contributions
from laya.clt.fit import clt_loss
from laya.clt.metrics import reconstruction_metrics
from laya.clt.replace import ReplacedViT, Replacement
from laya.clt.run import train_clt
from laya.config import ConfigError, from_dict
from laya.heads import HeadCard
from laya.store import FeatureStore

L, D = 3, 8


def identity_clt(num_layers: int = L, d: int = D, scale: float = 1.0) -> CrossLayerTranscoder:
    """Abs-TopK with k = F = d, W_enc = I, W_dec^{j→j} = scale·I, no cross-layer terms, no standardisation:
    ŷ_j = scale · x_j exactly."""
    clt = CrossLayerTranscoder(num_layers, d, CLTConfig(dict_size=d, activation="abs_topk", k=d))
    with torch.no_grad():
        clt.w_enc.copy_(torch.eye(d).expand(num_layers, d, d))
        for w in clt.w_dec:
            w.zero_()
            w[:, 0] = scale * torch.eye(d)
    return clt


def test_changing_a_code_never_changes_an_earlier_layer():
    torch.manual_seed(0)
    clt = CrossLayerTranscoder(4, D, CLTConfig(dict_size=16, activation="relu_topk", k=4))
    for w in clt.w_dec:
        nn.init.normal_(w)
    z = torch.randn(5, 4, 16)
    base = clt.decode_standardised(z)
    for i in range(4):
        bumped = z.clone()
        bumped[:, i] += torch.randn(5, 16)
        changed = clt.decode_standardised(bumped)
        assert torch.equal(changed[:, :i], base[:, :i])  # no path from layer i to j < i
        assert not torch.allclose(changed[:, i], base[:, i])  # …but to i itself


def test_topk_variants_keep_exactly_k_and_abs_topk_keeps_signs():
    pre = torch.randn(64, L, 32)
    for by_abs in (False, True):
        z = TopK(5, by_abs)(pre + (0 if by_abs else 10))  # shifted so ≥ k entries are positive for ReLU-TopK
        assert ((z != 0).sum(-1) == 5).all()
    z = TopK(5, by_abs=True)(pre)
    assert (z < 0).any()  # negative values survive
    kept = z != 0
    assert (pre.abs()[kept].min() >= pre.abs().masked_fill(kept, 0).amax(-1).min())
    assert torch.equal(z[kept], pre[kept])  # values (and signs) unchanged
    relu = TopK(5, by_abs=False)(pre)
    assert (relu >= 0).all() and ((relu != 0).sum(-1) <= 5).all()


def test_jumprelu_threshold_receives_a_gradient_from_reconstruction_and_sparsity():
    torch.manual_seed(0)
    clt = CrossLayerTranscoder(L, D, CLTConfig(dict_size=32, activation="jumprelu", threshold=0.5, bandwidth=0.5))
    x, y = torch.randn(256, L, D), torch.randn(256, L, D)
    for sparsity in (0.0, 1.0):
        clt.zero_grad()
        clt_loss(clt, x, y, sparsity)[0].backward()
        grad = clt.sigma.log_threshold.grad
        assert grad is not None and grad.abs().sum() > 0
    clt.zero_grad()
    clt_loss(clt, x, y, 1.0)[2].backward()  # the L0 term alone pushes thresholds up (negative gradient)
    assert clt.sigma.log_threshold.grad.sum() < 0
    pre = torch.tensor([[[0.2, 0.6, -1.0] + [0.0] * 29]])
    out = JumpReLU((1, 32), threshold=0.5, bandwidth=0.05)(pre)
    assert out[0, 0, :3].tolist() == pytest.approx([0.0, 0.6, 0.0])


def test_one_jumprelu_for_the_whole_stack_and_for_one_layer():
    """encode_layer (replacement, contributions) uses the same σ as the batched forward pass."""
    torch.manual_seed(0)
    clt = CrossLayerTranscoder(L, D, CLTConfig(dict_size=32, activation="jumprelu", threshold=0.3))
    with torch.no_grad():
        clt.sigma.log_threshold.copy_(torch.rand(L, 32).log())  # a different θ per layer and feature
    x = torch.randn(64, L, D)
    out = clt(x)
    for i in range(L):
        assert torch.equal(clt.encode_layer(i, x[:, i]), out.z[:, i])
    torch.testing.assert_close(out.y, out.y_std * clt.y_scale[:, None] + clt.y_mean)


def test_the_loss_compares_standardised_values_without_a_round_trip():
    torch.manual_seed(0)
    clt = CrossLayerTranscoder(L, D, CLTConfig(dict_size=16, activation="relu_topk", k=4))
    clt.set_standardisation(torch.randn(L, D), torch.rand(L) + 0.5, torch.randn(L, D), torch.rand(L) + 0.5)
    x, y = torch.randn(32, L, D), torch.randn(32, L, D)
    out = clt(x)
    expected = ((out.y_std - (y - clt.y_mean) / clt.y_scale[:, None]) ** 2).mean()
    assert torch.equal(clt_loss(clt, x, y, 0.0)[1], expected)


def test_r2_cosine_l0_and_dead_features_on_known_data():
    rng = np.random.default_rng(0)
    x = rng.normal(1.0, 2.0, (500, L, D)).astype(np.float16)
    tokens = Tokens(torch.from_numpy(x), torch.from_numpy(x))
    scores = reconstruction_metrics(identity_clt(scale=1.0), tokens)
    assert scores["r2"] == pytest.approx(1.0, abs=1e-6) and scores["cosine"] == pytest.approx(1.0, abs=1e-5)
    half = reconstruction_metrics(identity_clt(scale=0.5), tokens)
    y = x.astype(np.float64)
    expected_r2 = [1 - ((0.5 * y[:, j]) ** 2).sum() / ((y[:, j] - y[:, j].mean(0)) ** 2).sum() for j in range(L)]
    assert half["per_layer"]["r2"] == pytest.approx(expected_r2, abs=1e-4)
    assert half["cosine"] == pytest.approx(1.0, abs=1e-5)  # a scaled copy points the same way
    assert half["l0"] == pytest.approx((x != 0).sum(-1).mean(), abs=1e-6) and half["dead"] == 0
    x[:, :, 0] = 0  # feature 0 of every layer never fires
    dead = reconstruction_metrics(identity_clt(), Tokens(torch.from_numpy(x), torch.from_numpy(x)))
    assert dead["per_layer"]["dead"] == [1.0] * L and dead["dead"] == L


def test_contribution_shares_sum_to_one_and_a_diagonal_clt_builds_each_layer_from_itself():
    terms = torch.tensor([[[1.0, 0.0], [0.0, 2.0], [-1.0, 0.0]]])  # ŷ = (0, 2): only the 2nd source projects
    assert contribution_shares(terms).tolist() == [[0.0, 1.0, 0.0]]
    x = torch.randn(100, L, D).half()
    shares = mean_contributions(identity_clt(), Tokens(x, x))
    assert np.allclose(shares, np.eye(L))


class LinearMLP(nn.Module):
    """Stand-in for a ViT block's MLP that a CLT can reproduce exactly."""

    def __init__(self, d: int):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return self.fc(x)


def test_replacement_with_an_exact_clt_leaves_the_vit_logits_unchanged():
    torch.manual_seed(0)
    cfg = BackboneConfig(arch="vit", model={"patch_size": 7, "embed_dim": 16, "depth": 3, "num_heads": 2})
    vit = build_model(cfg, 1, 28, 10, "backbones.vit").eval()
    d, depth = 16, 3
    for block in vit.blocks:
        block.mlp = LinearMLP(d)
    # standardisation with arbitrary statistics: the decoder folds them back in
    x_mean, y_mean = torch.randn(depth, d), torch.randn(depth, d)
    x_scale, y_scale = torch.rand(depth) + 0.5, torch.rand(depth) + 0.5
    clt = CrossLayerTranscoder(depth, d, CLTConfig(dict_size=d, activation="abs_topk", k=d))
    clt.set_standardisation(x_mean, x_scale, y_mean, y_scale)
    with torch.no_grad():
        clt.w_enc.copy_(torch.eye(d).expand(depth, d, d))
        clt.b_enc.zero_()
        for j, (w, block) in enumerate(zip(clt.w_dec, vit.blocks)):
            w.zero_()
            weight, bias = block.mlp.fc.weight, block.mlp.fc.bias  # y = x Wᵀ + b
            w[:, 0] = x_scale[j] * weight.T / y_scale[j]
            clt.b_dec[j] = (x_mean[j] @ weight.T + bias - y_mean[j]) / y_scale[j]
    images = torch.randn(4, 1, 28, 28)
    with torch.no_grad():
        original = vit(images)
    for plan in (Replacement("cls"), Replacement("patch"), Replacement("patch", from_layer=2)):
        replaced = ReplacedViT(vit, clt, plan).logits(images)
        assert torch.allclose(replaced, original, atol=1e-4), plan
    # a wrong CLT does change them, so the comparison above can fail
    with torch.no_grad():
        clt.b_dec += torch.randn_like(clt.b_dec)  # (a constant shift would vanish in LayerNorm)
    assert not torch.allclose(ReplacedViT(vit, clt, Replacement("cls")).logits(images), original, atol=1e-2)


def test_training_learns_a_layered_linear_map_and_round_trips_through_safetensors(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.normal(0, 1, (4000, L, D))
    mix = rng.normal(0, 0.5, (L, D, D))
    y = np.stack([x[:, j] @ mix[j] + 0.3 * x[:, max(j - 1, 0)] for j in range(L)], 1)  # needs layer j−1 too
    train = Tokens(torch.from_numpy(x.astype(np.float16)), torch.from_numpy(y.astype(np.float16)))
    cfg = CLTConfig(activation="abs_topk", dict_size=32, k=16, epochs=20, batch_size=256, lr=3e-3)
    model, history = train_clt(None, cfg, train)
    assert history[-1]["recon_loss"] < 0.5 * history[0]["recon_loss"]
    assert reconstruction_metrics(model, train)["r2"] > 0.9
    again, _ = train_clt(None, cfg, train)  # same seed → same weights
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), again.state_dict().values()))
    card = save_clt(model, tmp_path / "clt", layers=["a", "b", "c"], history=history)
    loaded = load_clt(tmp_path / "clt")
    assert torch.equal(loaded(train.x[:10].float()).y, model(train.x[:10].float()).y)
    assert CLTCard.load(tmp_path / "clt") == card and card.config == cfg and card.layers == ["a", "b", "c"]
    with pytest.raises(ConfigError, match=r"clt/config.json: this is a clt card, not a head card"):
        HeadCard.load(tmp_path / "clt")


@pytest.mark.parametrize("values, message", [
    ({"activation": "gelu"}, "clt.activation: unknown value 'gelu'; valid: ['jumprelu', 'relu_topk', 'abs_topk']"),
    ({"tokens": "all"}, "clt.tokens: unknown value 'all'"),
    ({"k": 600}, "clt.k: expected at most dict_size (512), got 600"),
    ({"dict_size": 0}, "clt.dict_size: expected a positive integer, got 0"),
    ({"sparsity": -1}, "clt.sparsity: expected a number ≥ 0"),
    ({"widht": 3}, "clt: unknown key(s) ['widht']"),
])
def test_bad_clt_params_name_the_key(values, message):
    with pytest.raises(ConfigError) as err:
        from_dict(CLTConfig, values, "clt")
    assert message in str(err.value)


def test_a_cache_without_mlp_io_is_refused_with_the_fix(tmp_path):
    from conftest import write_feature_store

    store = FeatureStore.open(write_feature_store(tmp_path / "toy.zarr"))
    with pytest.raises(ConfigError, match=r"toy.zarr: the cache holds no MLP inputs/outputs; set clt.backbone: "
                                          r".* or extract.mlp_io: true"):
        load_tokens(store, "train", "cls")
