"""Layer attribution methods, one verb: `method.attribute(head, layers, target) -> (B, L)`.

Intrinsic (`intrinsic`): the head's own layer weights — LAYA's α(x), ScalarMix's static softmax weights.
Post-hoc through Captum on the head's layer inputs, explaining the predicted class's logit: Integrated
Gradients (baseline = the ablation values, so its completeness sum is what ablating every layer removes),
Gradient×Activation, Saliency (|gradient|). Per-feature attributions are summed over each layer's features.
Layer-wise relevance for heads with a linear readout (`lrp`): layer i's term of the explained logit, conserving
it exactly (Σ_i R_i + b_c = logit_c); `lrp_delta`: the same term minus its value with layer i at the ablation
value, the head's own layer weights held — what the layer adds over its ablation value.
`probe`: p_c from each layer's own linear probe (the `probe` head) — what each layer alone can decode.
`random` is the floor, `loo` (the effects themselves) the oracle. Which head a method explains is not the
method's business: params `evaluate.methods` pairs each method with the heads it explains.
"""

from __future__ import annotations

import torch

from laya.ablation import leave_one_out
from laya.core.config import ConfigError
from laya.heads.base import Readout


def _inputs(layers: list[torch.Tensor]) -> tuple[torch.Tensor, ...]:
    """Fresh leaf tensors that require gradients (Captum differentiates with respect to them)."""
    return tuple(t.detach().requires_grad_(True) for t in layers)


def _per_layer(attributions: tuple[torch.Tensor, ...]) -> torch.Tensor:
    return torch.stack([a.sum(dim=1) for a in attributions], dim=1).detach()  # (B, L)


class _Forward(torch.nn.Module):
    """Captum wants inputs as separate tensors: forward(*layers) -> logits."""

    def __init__(self, head: torch.nn.Module):
        super().__init__()
        self.head = head

    def forward(self, *layers: torch.Tensor) -> torch.Tensor:
        return self.head(list(layers))


class _Method:
    """`values`: the per-layer ablation values (IG's baseline, LOO's replacement); `seed` for random ones."""

    def __init__(self, values: list[torch.Tensor], seed: int = 0):
        self.values = values
        self.seed = seed


class Intrinsic(_Method):
    """The head's own `layer_weights` (LAYA α(x), ScalarMix softmax(w))."""

    def attribute(self, head, layers, target):
        weights = head.layer_weights(layers)
        if weights is None:
            raise ConfigError(f"evaluate.methods: the {head.name} head has no layer weights; use it with a "
                              f"post-hoc method instead.")
        return weights.detach()


IG_STEPS = 16  # params evaluate.ig_steps


class IntegratedGradients(_Method):
    """Captum's IG with `steps` Gauss–Legendre points on the path baseline → x: the heads' integrand is smooth
    (softmax, GELU), and Gauss quadrature converges exponentially on smooth integrands, so few points give the
    many-point attributions to float32 rounding (tests/test_evaluate.py compares them)."""

    def __init__(self, values: list[torch.Tensor], seed: int = 0, steps: int = IG_STEPS):
        super().__init__(values, seed)
        self.steps = steps

    def attribute(self, head, layers, target):
        from captum.attr import IntegratedGradients as CaptumIG

        baselines = tuple(v.expand_as(t) for v, t in zip(self.values, layers))
        ig = CaptumIG(_Forward(head))
        return _per_layer(ig.attribute(_inputs(layers), baselines=baselines, target=target, n_steps=self.steps,
                                       internal_batch_size=len(target)))


class GradientTimesActivation(_Method):
    def attribute(self, head, layers, target):
        from captum.attr import InputXGradient

        return _per_layer(InputXGradient(_Forward(head)).attribute(_inputs(layers), target=target))


class Saliency(_Method):
    def attribute(self, head, layers, target):
        from captum.attr import Saliency as CaptumSaliency

        return _per_layer(CaptumSaliency(_Forward(head)).attribute(_inputs(layers), target=target, abs=True))


def readout_of(head, layers):
    """The head's linear readout (laya.heads.base.Readout), or a one-line error for a head without one."""
    found = head.readout(layers)
    if found is None:
        raise ConfigError(f"evaluate.methods: the {head.name} head has no linear readout for lrp; explain it with "
                          f"another method (e.g. ig).")
    return found


class LayerwiseRelevance(_Method):
    """R_i = w_i(x) · v_i(h_i)[c]: layer i's term of logit c (α held constant through the aggregation, as AttnLRP
    and CP-LRP treat attention weights). One head pass per batch."""

    @torch.no_grad()
    def attribute(self, head, layers, target):
        return readout_of(head, layers).terms(target)


class LayerwiseRelevanceDelta(_Method):
    """R_i = w_i(x) · (v_i(h_i) − v_i(a_i))[c], a_i layer i's ablation value: what layer i adds over it, the
    weights held. One head pass per batch, plus one for the ablation values."""

    @torch.no_grad()
    def attribute(self, head, layers, target):
        found = readout_of(head, layers)
        reference = readout_of(head, [v.reshape(1, -1).to(t.dtype) for v, t in zip(self.values, layers)])
        return Readout(found.weights, found.values - reference.values, found.bias).terms(target)


class LayerProbe(_Method):
    """R_i = p_c(x) by the linear probe of layer i alone (laya.heads.probe, trained beside the explained head):
    how well each layer by itself already decodes the class the head predicts. Reads the probes, not the head."""

    def __init__(self, values: list[torch.Tensor], seed: int = 0, probes: torch.nn.Module | None = None):
        super().__init__(values, seed)
        if probes is None:
            raise ConfigError(f"evaluate.methods.{PROBE}: no trained `{PROBE}` head for this seed; add {PROBE} to "
                              f"heads.names and rerun the train stage.")
        self.probes = probes

    @torch.no_grad()
    def attribute(self, head, layers, target):
        probs = torch.softmax(self.probes.layer_logits(layers), dim=-1)  # (B, L, C)
        return probs.gather(2, target.view(-1, 1, 1).expand(-1, probs.shape[1], 1)).squeeze(2)


class Random(_Method):
    def __init__(self, values: list[torch.Tensor], seed: int = 0):
        super().__init__(values, seed)
        self.generator = torch.Generator().manual_seed(seed)

    def attribute(self, head, layers, target):
        return torch.rand(len(target), len(layers), generator=self.generator).to(target.device)


class LeaveOneOutOracle(_Method):
    def attribute(self, head, layers, target):
        return leave_one_out(head, layers, self.values, target).effects


INTRINSIC = "intrinsic"
PROBE = "probe"  # the method, and the head (laya.heads.probe) it reads
LRP = ("lrp", "lrp_delta")  # methods that need a head with a linear readout
METHODS = {INTRINSIC: Intrinsic, "ig": IntegratedGradients, "grad_x_act": GradientTimesActivation,
           "saliency": Saliency, "lrp": LayerwiseRelevance, "lrp_delta": LayerwiseRelevanceDelta,
           PROBE: LayerProbe, "random": Random, "loo": LeaveOneOutOracle}


def build_method(name: str, values: list[torch.Tensor], seed: int = 0, ig_steps: int = IG_STEPS,
                 probes: torch.nn.Module | None = None):
    """Method `name`; `probes`: the seed's trained per-layer probes, which the `probe` method reads."""
    if name not in METHODS:
        raise ConfigError(f"evaluate.methods: unknown method {name!r}; valid: {sorted(METHODS)}.")
    if name == "ig":
        return IntegratedGradients(values, seed, ig_steps)
    if name == PROBE:
        return LayerProbe(values, seed, probes)
    return METHODS[name](values, seed)
