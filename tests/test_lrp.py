"""Layer-wise relevance for heads with a linear readout: every head's explained logit decomposes exactly over its
layers (conservation), Captum's LRP computes the same relevance on a pure-Linear head, the ablation-relative
variant is what a layer adds over its ablation value, and unlike α it reads the classifier."""

import pytest
import torch
from scipy.stats import spearmanr

from laya.core.config import ConfigError
from laya.evaluate.config import has_readout
from laya.evaluate.methods import _Forward, build_method, readout_of
from laya.heads import HEADS, build
from laya.heads.base import LayerHead

DIMS, CLASSES = [6, 9, 4], 5


def _layers(n: int = 32, seed: int = 0) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(n, d, generator=g) for d in DIMS]


def _head(name: str, seed: int = 0) -> LayerHead:
    torch.manual_seed(seed)
    return build(name, DIMS, CLASSES).eval()


READOUT_HEADS = [name for name in sorted(HEADS) if has_readout(name)]


def test_every_head_but_the_per_layer_probes_has_a_linear_readout():
    """The probes' forward is a mean of log-probabilities: no readout to decompose (lrp refuses it)."""
    assert set(HEADS) - set(READOUT_HEADS) == {"probe"}
    with pytest.raises(ConfigError, match="the probe head has no linear readout for lrp"):
        build_method("lrp", []).attribute(_head("probe"), _layers(), torch.zeros(32, dtype=torch.long))


@pytest.mark.parametrize("name", READOUT_HEADS)
def test_relevances_and_the_bias_sum_to_the_explained_logit(name):
    head, layers = _head(name), _layers()
    with torch.no_grad():
        logits = head(layers)
    target = logits.argmax(1)
    relevance = build_method("lrp", [torch.zeros(d) for d in DIMS]).attribute(head, layers, target)
    bias = readout_of(head, layers).bias[target]
    assert relevance.shape == (32, len(DIMS))
    torch.testing.assert_close(relevance.sum(1) + bias, logits.gather(1, target[:, None]).squeeze(1),
                               rtol=0, atol=1e-5)


def test_the_last_layer_head_puts_all_relevance_on_its_last_layer():
    relevance = build_method("lrp", []).attribute(_head("last"), _layers(), torch.zeros(32, dtype=torch.long))
    assert (relevance[:, :-1] == 0).all() and (relevance[:, -1] != 0).all()


def test_captum_lrp_on_a_pure_linear_head_gives_the_same_relevance():
    """Concat is one nn.Linear over the concatenated layers: Captum's LRP (epsilon rule) per feature, summed over
    each layer's features, is our per-layer term (up to the rule's ε)."""
    from captum.attr import LRP

    head, layers = _head("concat"), _layers()
    target = torch.arange(32) % CLASSES
    ours = build_method("lrp", []).attribute(head, layers, target)
    theirs = LRP(_Forward(head)).attribute(tuple(t.clone().requires_grad_(True) for t in layers), target=target)
    per_layer = torch.stack([a.sum(1) for a in theirs], dim=1).detach()
    # the epsilon rule gives input j the share x_j W_cj of logit c (the bias keeps its own): summed per layer, ours
    torch.testing.assert_close(per_layer, ours, rtol=1e-4, atol=1e-4)


def test_the_delta_variant_is_what_a_layer_adds_over_its_ablation_value():
    head, layers = _head("laya"), _layers()
    means = [t.mean(0) for t in _layers(256, seed=1)]
    target = torch.arange(32) % CLASSES
    delta = build_method("lrp_delta", means).attribute(head, layers, target)
    with torch.no_grad():
        z, alpha = head._attend(layers)
        z_mean = head.adapters([m[None] for m in means])  # (1, L, d*)
        expected = alpha * ((z - z_mean) @ head.classifier.weight[target].unsqueeze(2)).squeeze(2)
    torch.testing.assert_close(delta, expected, rtol=1e-5, atol=1e-6)
    # on Concat, linear in every layer, it is Integrated Gradients from the ablation values, exactly
    concat = _head("concat")
    ig = build_method("ig", means, ig_steps=4).attribute(concat, layers, target)
    torch.testing.assert_close(build_method("lrp_delta", means).attribute(concat, layers, target), ig,
                               rtol=1e-4, atol=1e-5)


def test_unlike_alpha_lrp_changes_when_the_classifier_is_re_initialised():
    head, layers = _head("laya"), _layers(256)
    target = torch.arange(256) % CLASSES
    before = build_method("lrp", []).attribute(head, layers, target)
    alpha = head.layer_weights(layers).detach()
    torch.nn.init.normal_(head.classifier.weight)
    after = build_method("lrp", []).attribute(head, layers, target)
    assert torch.equal(head.layer_weights(layers).detach(), alpha)  # α never reads the classifier
    rho = sum(spearmanr(a, b).statistic for a, b in zip(before, after)) / len(target)
    assert rho < 0.9, rho


def test_a_head_without_a_linear_readout_is_refused_in_one_line():
    class Opaque(LayerHead):
        name = "opaque"

        def forward(self, layers):
            return layers[-1][:, :CLASSES].tanh()

    with pytest.raises(ConfigError, match="opaque head has no linear readout"):
        build_method("lrp", []).attribute(Opaque(DIMS, CLASSES, None), _layers(), torch.zeros(32, dtype=torch.long))
