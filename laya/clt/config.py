"""Params sections `clt` (one transcoder, stage `clt`) and `clt_frontier` (the sparsity sweep, stage `clt_frontier`)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from laya.clt.activations import ACTIVATIONS
from laya.core.config import ConfigError, choice, require

TOKEN_POSITIONS = ("cls", "patch")  # metrics are always reported for both
TOKEN_KINDS = (*TOKEN_POSITIONS, "both")  # what a CLT can be trained on
ARCHITECTURES = ("clt", "transcoder", "sae")  # cross-layer decoder | its diagonal alone | an SAE on the MLP outputs


@dataclass(frozen=True)
class CLTConfig:
    backbone: str = "vit"  # a key of params `backbones` whose cache has MLP inputs/outputs (extract.mlp_io)
    tokens: str = "both"  # training tokens: cls | patch | both
    activation: str = "relu_topk"  # jumprelu | relu_topk | abs_topk
    architecture: str = "clt"  # clt | transcoder (per layer: the decoder's diagonal) | sae (per layer, on outputs)
    dict_size: int = 512  # features per layer (F)
    k: int = 16  # TopK: active features per token and layer
    sparsity: float = 0.003  # JumpReLU: λ in loss = (1 − R²) + λ·L0
    threshold: float = 1.0  # JumpReLU: initial θ (standardised units)
    bandwidth: float = 0.05  # JumpReLU: straight-through kernel width ε
    threshold_lr: float = 0.02  # JumpReLU: Adam learning rate of log θ (θ must travel far in few steps)
    epochs: int = 4  # passes over the training tokens
    batch_size: int = 1024  # tokens per Adam step
    lr: float = 0.001  # Adam, cosine decay to 0
    seed: int = 0  # initialisation and token order
    max_images: int | None = None  # training images whose tokens are used; null = the whole training split
    replace_from: int = 3  # replacement (c): patch tokens from this block on
    bootstrap: int = 1000  # resamples of the asymmetry's bootstrap intervals (over test images)

    def validate(self, key: str) -> None:
        choice(self.tokens, TOKEN_KINDS, f"{key}.tokens")
        choice(self.activation, ACTIVATIONS, f"{key}.activation")
        choice(self.architecture, ARCHITECTURES, f"{key}.architecture")
        for name in ("dict_size", "k", "epochs", "batch_size"):
            value = getattr(self, name)
            require(value > 0, f"{key}.{name}", value, "a positive integer")
        require(self.k <= self.dict_size, f"{key}.k", self.k, f"at most dict_size ({self.dict_size})")
        for name in ("sparsity",):
            require(getattr(self, name) >= 0, f"{key}.{name}", getattr(self, name), "a number ≥ 0")
        for name in ("threshold", "bandwidth", "threshold_lr", "lr"):
            require(getattr(self, name) > 0, f"{key}.{name}", getattr(self, name), "a number > 0")
        require(self.max_images is None or self.max_images > 0, f"{key}.max_images", self.max_images,
                "null or a positive integer")
        require(self.replace_from >= 0, f"{key}.replace_from", self.replace_from, "a block index ≥ 0")
        require(self.bootstrap >= 99, f"{key}.bootstrap", self.bootstrap, "an integer ≥ 99")


@dataclass(frozen=True)
class FrontierConfig:
    ks: list[int] = field(default_factory=lambda: [4, 8, 16, 32, 64])  # TopK variants
    sparsities: list[float] = field(default_factory=lambda: [0.0003, 0.001, 0.003, 0.01, 0.03])  # JumpReLU λ
    activations: list[str] = field(default_factory=lambda: ["relu_topk", "abs_topk", "jumprelu"])  # CLT variants
    # swept: TopK ones over `ks`, JumpReLU over `sparsities`
    epochs: int = 2  # per sweep point (a point is a full CLT training)
    max_images: int | None = 9000  # training images per point (each point's test scoring costs as much as its training)
    baselines: dict[str, list[str]] = field(default_factory=lambda: {"transcoder": ["relu_topk"],
                                                                      "sae": ["relu_topk"]})  # per-layer models
    # beside the CLT, each over the same ks / λ grid and dictionary size: architecture → its activations

    def validate(self, key: str) -> None:
        for name in self.activations:
            choice(name, ACTIVATIONS, f"{key}.activations")
        for architecture, activations in self.baselines.items():
            if architecture not in ARCHITECTURES[1:]:
                raise ConfigError(f"{key}.baselines: unknown per-layer model {architecture!r}; valid: "
                                  f"{list(ARCHITECTURES[1:])} (the CLT itself is {key}.activations).")
            require(isinstance(activations, list) and bool(activations), f"{key}.baselines.{architecture}",
                    activations, f"a non-empty list of activations out of {list(ACTIVATIONS)}")
            for name in activations:
                choice(name, ACTIVATIONS, f"{key}.baselines.{architecture}")
        require(all(k > 0 for k in self.ks) and self.ks, f"{key}.ks", self.ks, "a non-empty list of positive k")
        require(all(s >= 0 for s in self.sparsities), f"{key}.sparsities", self.sparsities, "numbers ≥ 0")
        require(self.epochs > 0, f"{key}.epochs", self.epochs, "a positive integer")
        require(self.max_images is None or self.max_images > 0, f"{key}.max_images", self.max_images,
                "null or a positive integer")


def frontier_configs(base: CLTConfig, activations: list[str], ks: list[int], sparsities: list[float],
                     epochs: int, max_images: int | None,
                     baselines: dict[str, list[str]] | None = None) -> list[CLTConfig]:
    """The sweep: the CLT with every TopK variant × k and JumpReLU × λ, then each per-layer baseline
    (architecture → its activations) over the same grid; everything else as in `base`."""
    models = [("clt", activations), *(baselines or {}).items()]
    topk = [a for _, names in models for a in names if a != "jumprelu"]
    too_big = [k for k in ks if k > base.dict_size] if topk else []
    if too_big:
        raise ConfigError(f"clt_frontier.ks: {too_big} exceed clt.dict_size ({base.dict_size}), so TopK could not keep "
                          f"that many features; use k ≤ {base.dict_size} or raise clt.dict_size.")
    configs = []
    for architecture, names in models:
        common = {"architecture": architecture, "epochs": epochs, "max_images": max_images}
        for name in names:
            if name == "jumprelu":
                configs += [replace(base, activation=name, sparsity=s, **common) for s in sparsities]
            else:
                configs += [replace(base, activation=name, k=k, **common) for k in ks]
    return configs
