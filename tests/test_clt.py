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
from laya.core.config import ConfigError, from_dict
from laya.heads import HeadCard
from laya.storage.store import FeatureStore

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


def _layered_tokens(n: int = 3000) -> Tokens:
    """y_j = x_j A_j + x_{j−1}: every layer's output needs the layer before it (layer 0: its own input only)."""
    rng = np.random.default_rng(1)
    x = rng.normal(0, 1, (n, L, D))
    mix = rng.normal(0, 0.5, (L, D, D))
    y = np.stack([x[:, j] @ mix[j] + (x[:, j - 1] if j else 0) for j in range(L)], 1)
    return Tokens(torch.from_numpy(x.astype(np.float16)), torch.from_numpy(y.astype(np.float16)))


def test_per_layer_baselines_have_no_cross_layer_path_and_an_sae_reads_the_outputs():
    train = _layered_tokens()
    common = {"activation": "abs_topk", "dict_size": 32, "k": 16, "epochs": 20, "batch_size": 256, "lr": 3e-3}
    scores = {}
    for architecture in ("clt", "transcoder", "sae"):
        model, _ = train_clt(None, CLTConfig(architecture=architecture, **common), train)
        assert [tuple(w.shape) for w in model.w_dec] == ([(32, L - i, D) for i in range(L)] if architecture == "clt"
                                                         else [(32, 1, D)] * L)
        scores[architecture] = reconstruction_metrics(model, train)["per_layer"]["r2"]
        shares = mean_contributions(model, train)
        if architecture != "clt":  # every layer built from itself alone
            assert np.allclose(shares, np.eye(L), atol=1e-6)
    assert scores["transcoder"][0] > 0.9  # layer 0 needs nothing earlier
    assert max(scores["transcoder"][1:]) < 0.8 < min(scores["clt"][1:])  # the input of layer j−1 is out of reach
    assert min(scores["sae"]) > 0.9  # it encodes the output itself: the layer before is no obstacle


def test_dense_features_are_those_firing_on_more_than_a_tenth_of_the_tokens():
    x = np.zeros((100, L, D), dtype=np.float16)
    x[:, :, 0] = 1  # feature 0 fires on every token
    x[:5, :, 1] = 1  # feature 1 on 5 % of them; the rest never
    scores = reconstruction_metrics(identity_clt(), Tokens(torch.from_numpy(x), torch.from_numpy(x)))
    assert scores["per_layer"]["dense"] == [1.0] * L and scores["dense_fraction"] == pytest.approx(1 / D)
    assert scores["per_layer"]["dead"] == [D - 2.0] * L
    assert scores["per_layer"]["fvu"] == pytest.approx([1 - r for r in scores["per_layer"]["r2"]])


def test_the_frontier_sweeps_each_baseline_over_the_clts_grid():
    from laya.clt.config import FrontierConfig, frontier_configs
    from laya.clt.frontier import label

    configs = frontier_configs(CLTConfig(), ["relu_topk", "jumprelu"], [4, 16], [0.01], 1, 100,
                               {"transcoder": ["relu_topk"], "sae": ["relu_topk", "jumprelu"]})
    labels = [label({"architecture": c.architecture, "activation": c.activation,
                     "k": c.k if c.activation != "jumprelu" else None, "sparsity": c.sparsity}) for c in configs]
    assert labels == ["relu_topk_k4", "relu_topk_k16", "jumprelu_l0.01", "transcoder_relu_topk_k4",
                      "transcoder_relu_topk_k16", "sae_relu_topk_k4", "sae_relu_topk_k16", "sae_jumprelu_l0.01"]
    assert {c.dict_size for c in configs} == {CLTConfig().dict_size}
    with pytest.raises(ConfigError, match=r"clt_frontier.baselines: unknown per-layer model 'clt'; valid: "
                                          r"\['transcoder', 'sae'\]"):
        from_dict(FrontierConfig, {"baselines": {"clt": ["relu_topk"]}}, "clt_frontier")
    with pytest.raises(ConfigError, match=r"clt_frontier.baselines.sae: unknown value 'gelu'"):
        from_dict(FrontierConfig, {"baselines": {"sae": ["gelu"]}}, "clt_frontier")


@pytest.mark.parametrize("values, message", [
    ({"architecture": "dense"}, "clt.architecture: unknown value 'dense'; valid: ['clt', 'transcoder', 'sae']"),
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


def test_the_asymmetry_is_read_from_which_layers_build_each_token_and_its_interval_covers_the_mean():
    from laya.clt.asymmetry import asymmetry, describe_asymmetry

    clt = identity_clt(num_layers=2)
    with torch.no_grad():
        clt.w_dec[0][:, 1] = torch.eye(D)  # layer 0's code also writes to layer 1
    rng = np.random.default_rng(0)

    def tokens(n: int, *silent: int) -> Tokens:  # token t's layer silent[t % len] all zero: its code is empty
        x = rng.normal(1.0, 1.0, (n, 2, D)).astype(np.float16)
        for t in range(n):
            x[t, silent[t % len(silent)]] = 0
        return Tokens(torch.from_numpy(x), torch.from_numpy(x))

    found = asymmetry(clt, {"cls": tokens(40, 1), "patch": tokens(120, 0)}, patches_per_image=3, resamples=199)
    assert found.cls.mean == pytest.approx(1.0) and found.patch.mean == pytest.approx(0.0)
    assert found.holds and found.images == 40 and found.cls_minus_patch.ci95[0] > 0.99
    reverse = asymmetry(clt, {"cls": tokens(40, 0), "patch": tokens(120, 1)}, patches_per_image=3, resamples=199)
    assert not reverse.holds and reverse.cls_minus_patch.mean == pytest.approx(-1.0)
    mixed = asymmetry(clt, {"cls": tokens(40, 1, 0), "patch": tokens(40, 0)}, patches_per_image=1, resamples=199)
    low, high = mixed.cls.ci95
    assert low < mixed.cls.mean < high and 0 < low and high < 1  # half the CLS tokens draw on layer 0
    assert "does not hold" in describe_asymmetry("clt", reverse)
