"""Params section `evaluate`: how layers are ablated, which attribution method explains which head, how many
explanations."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from laya.ablation import ABLATIONS
from laya.core.config import ConfigError, choice, from_dict, require
from laya.evaluate.methods import IG_STEPS, INTRINSIC, LRP, METHODS, PROBE
from laya.heads import HEADS, LayerHead
from laya.spatial.config import SpatialConfig


def _default_methods() -> dict[str, list[str]]:
    return {"intrinsic": ["laya", "scalarmix", "alf"], "ig": ["laya"], "grad_x_act": ["laya"],
            "lrp": ["laya", "alf"], "lrp_delta": ["laya", "alf"], "probe": ["laya", "alf"], "saliency": ["laya"],
            "random": ["laya"], "loo": ["laya"]}


SANITY_HEADS = ("laya", "laya_joint", "laya_aligned", "alf")  # heads with a randomisation cascade (laya.sanity)


@dataclass(frozen=True)
class SanityConfig:
    """params `evaluate.sanity`: the stage sanity@<name> (laya.sanity): model and data randomisation."""

    heads: list[str] = field(default_factory=lambda: list(SANITY_HEADS))  # heads checked (absent ones skipped)
    methods: list[str] = field(default_factory=lambda: [
        "intrinsic", "ig", "grad_x_act", "lrp", "lrp_delta", "saliency", "loo"])  # checked for each head (random is
    # left out: it draws the same numbers for any weights)
    max_samples: int = 500  # first test inputs whose attributions are compared
    label_epochs: int = 5  # epochs of the head trained on permuted training labels (no early stopping)
    seed: int = 0  # re-initialisation and label permutation

    def validate(self, key: str) -> None:
        require(len(self.heads) > 0 and len(set(self.heads)) == len(self.heads), f"{key}.heads", self.heads,
                "a non-empty list of distinct head names")
        unsupported = [h for h in self.heads if h not in SANITY_HEADS]
        if unsupported:
            raise ConfigError(f"{key}.heads: {unsupported} have no randomisation cascade; valid: "
                              f"{list(SANITY_HEADS)}.")
        unknown = [m for m in self.methods if m not in METHODS or m == "random"]
        if unknown or not self.methods:
            raise ConfigError(f"{key}.methods: {unknown or '(empty list)'} cannot be checked; valid: "
                              f"{sorted(m for m in METHODS if m != 'random')} (random draws the same numbers "
                              f"for any weights).")
        require(self.max_samples > 0, f"{key}.max_samples", self.max_samples, "a positive integer")
        require(self.label_epochs >= 1, f"{key}.label_epochs", self.label_epochs, "an integer ≥ 1")


def has_readout(head: str) -> bool:
    """Whether a registered head's logits decompose over its layers (laya.heads.base.Readout) — what lrp reads."""
    return HEADS[head].cls.readout is not LayerHead.readout


def has_layer_weights(head: str) -> bool:
    """Whether a registered head produces layer weights of its own (LAYA, ScalarMix) — what `intrinsic` reads."""
    return HEADS[head].cls.layer_weights is not LayerHead.layer_weights


@dataclass(frozen=True)
class EvaluateConfig:
    ablation: str = "mean"  # replace an ablated layer by its training-set mean | zero
    methods: dict[str, list[str]] = field(default_factory=_default_methods)  # method → the heads it explains
    explain: str | None = "laya"  # head whose own α(x) the WIA-AI-009 explanations and α figures show; null = none
    seeds: list[int] = field(default_factory=lambda: [0, 1, 2])  # trained seeds evaluated; metrics are
    # means (and stds) over them; explanations, depth patterns and figures come from the first
    max_samples: int | None = None  # test samples evaluated; null = the whole test split
    batch_size: int = 1000  # test inputs per attribution batch
    explain_n: int = 100  # WIA-AI-009 explanations written for the first explain_n test inputs
    confidence: list[float] = field(default_factory=lambda: [0.6, 0.9])  # low < 0.6 ≤ medium < 0.9 ≤ high
    sanity: dict = field(default_factory=dict)  # SanityConfig keys (stage sanity@<name>)
    cross_ablation: list[str] = field(default_factory=list)  # heads whose pairs are scored again under the other
    # ablation (mean ↔ zero): a head trained towards one ablation's LOO effects must keep its lead under the other
    shift_resamples: int = 1000  # relabellings of the per-class permutation test: α of wrong vs correct predictions
    spatial: dict = field(default_factory=dict)  # SpatialConfig keys: per-layer maps of the explained inputs
    ig_steps: int = IG_STEPS  # Integrated Gradients' quadrature points (evaluate and sanity)

    def validate(self, key: str) -> None:
        choice(self.ablation, ABLATIONS, f"{key}.ablation")
        unknown = [m for m in self.methods if m not in METHODS]
        if unknown or not self.methods:
            raise ConfigError(f"{key}.methods: unknown method(s) {unknown or '(empty mapping)'}; "
                              f"valid: {sorted(METHODS)}.")
        for method, heads in self.methods.items():
            require(isinstance(heads, list) and len(heads) > 0 and len(set(heads)) == len(heads),
                    f"{key}.methods.{method}", heads, "a non-empty list of distinct head names, e.g. [laya]")
            bad = [h for h in heads if h not in HEADS]
            if bad:
                raise ConfigError(f"{key}.methods.{method}: unknown head(s) {bad}; valid: {sorted(HEADS)}.")
        without = [h for h in self.methods.get(INTRINSIC, []) if not has_layer_weights(h)]
        if without:
            raise ConfigError(f"{key}.methods.{INTRINSIC}: head(s) {without} have no layer weights of their own; "
                              f"explain them with a post-hoc method (e.g. ig: {without}) instead.")
        for method in LRP:
            without = [h for h in self.methods.get(method, []) if not has_readout(h)]
            if without:
                raise ConfigError(f"{key}.methods.{method}: head(s) {without} have no linear readout to decompose; "
                                  f"explain them with ig instead.")
        if self.explain is not None and self.explain not in self.methods.get(INTRINSIC, []):
            raise ConfigError(f"{key}.explain: {self.explain!r} must be among {key}.methods.{INTRINSIC} "
                              f"{self.methods.get(INTRINSIC, [])} (its α is what the explanations show), or null.")
        require(len(self.seeds) > 0 and len(set(self.seeds)) == len(self.seeds), f"{key}.seeds", self.seeds,
                "a non-empty list of distinct trained seeds")
        require(self.max_samples is None or self.max_samples > 0, f"{key}.max_samples", self.max_samples,
                "null or a positive integer")
        require(self.batch_size > 0, f"{key}.batch_size", self.batch_size, "a positive integer")
        require(isinstance(self.ig_steps, int) and self.ig_steps >= 2, f"{key}.ig_steps", self.ig_steps,
                "an integer ≥ 2 (Gauss–Legendre points of Integrated Gradients)")
        require(self.explain_n >= 0, f"{key}.explain_n", self.explain_n, "an integer ≥ 0")
        require(isinstance(self.shift_resamples, int) and self.shift_resamples >= 99, f"{key}.shift_resamples",
                self.shift_resamples, "an integer ≥ 99 (p-values resolve 1 / (resamples + 1))")
        self.sanity_config(key)
        self.spatial_config(key)
        missing = [h for h in self.cross_ablation if h not in self.heads]
        if missing:
            raise ConfigError(f"{key}.cross_ablation: {missing} are explained by no method in {key}.methods; add "
                              f"them to a method (e.g. intrinsic) or remove them here.")
        low, high = (self.confidence + [None, None])[:2]
        require(len(self.confidence) == 2 and 0 < low < high < 1, f"{key}.confidence", self.confidence,
                "[low, high] thresholds with 0 < low < high < 1")

    def sanity_config(self, key: str = "evaluate") -> SanityConfig:
        return from_dict(SanityConfig, self.sanity, f"{key}.sanity")

    def spatial_config(self, key: str = "evaluate") -> SpatialConfig:
        return from_dict(SpatialConfig, self.spatial, f"{key}.spatial")

    def without_heads(self, heads: list[str]) -> EvaluateConfig:
        """The same config with every pair explaining one of `heads` dropped (heads a backbone does not have);
        without the `probe` head, the probe method goes too."""
        if not heads:
            return self
        methods = {m: [h for h in hs if h not in heads] for m, hs in self.methods.items()
                   if not (m == PROBE and PROBE in heads)}
        return replace(self, methods={m: hs for m, hs in methods.items() if hs},
                       cross_ablation=[h for h in self.cross_ablation if h not in heads])

    def crossed(self) -> EvaluateConfig | None:
        """The cross_ablation heads' pairs under the other ablation (no explanations); None when there are none."""
        if not self.cross_ablation:
            return None
        other = next(a for a in ABLATIONS if a != self.ablation)
        methods = {m: [h for h in hs if h in self.cross_ablation] for m, hs in self.methods.items()}
        return replace(self, ablation=other, methods={m: hs for m, hs in methods.items() if hs}, explain=None,
                       explain_n=0, cross_ablation=[])

    @property
    def pairs(self) -> list[tuple[str, str]]:
        """(method, head) in params order."""
        return [(method, head) for method, heads in self.methods.items() for head in heads]

    @property
    def heads(self) -> list[str]:
        """Every head some method explains, in first-use order, then the per-layer probes the probe method reads."""
        explained = [head for _, head in self.pairs]
        return list(dict.fromkeys(explained + ([PROBE] if PROBE in self.methods else [])))
