"""The transcoder stages' records: clt (reports/details/clt.json), clt_compare@<name> (clt_compare_<name>.json)
and clt_frontier (clt_frontier.json)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import ConfigDict

from laya.core.record import Part, Record


class Interval(Part):
    mean: float
    ci95: list[float]  # [low, high], bootstrap over test images

    def text(self) -> str:
        """'0.412 [0.405, 0.419]'"""
        return f"{self.mean:.3f} [{self.ci95[0]:.3f}, {self.ci95[1]:.3f}]"


class Asymmetry(Part):
    """laya.clt.asymmetry: the off-diagonal share per token type, and whether CLS − patch lies above 0."""

    cls: Interval
    patch: Interval
    cls_minus_patch: Interval
    holds: bool
    images: int
    resamples: int


class TokenScores(Part):
    """laya.clt.metrics.reconstruction_metrics on one token type's test tokens: means over layers; dead and dense
    features summed over layers, also as fractions of all L·F features."""

    r2: float
    fvu: float
    cosine: float
    l0: float
    dead: int
    dense: int
    dead_fraction: float
    dense_fraction: float


class LayerTokenScores(TokenScores):
    per_layer: dict[str, dict[str, float]]  # {metric: {layer name: value}}

    @classmethod
    def of(cls, scores: dict, layers: list[str]) -> LayerTokenScores:
        """From reconstruction_metrics's scores, per-layer lists named by layer (so `dvc metrics diff` names it)."""
        per_layer = {name: dict(zip(layers, values, strict=True)) for name, values in scores["per_layer"].items()}
        return cls(**{k: v for k, v in scores.items() if k != "per_layer"}, per_layer=per_layer)


class ReplacedAccuracy(Part):
    """The ViT's test accuracy with its MLP outputs replaced by the CLT's (laya.clt.replace)."""

    original: float
    cls: float
    patch: float
    patch_from_layer: float  # patch tokens replaced from block replace_from on
    replace_from: int
    cls_without_top_source: float
    cls_top_sources: dict[str, float]  # {k: CLS replaced keeping only the top-k source layers per block}


class CLTRecord(Record):
    STAGE: ClassVar[str] = "clt"

    backbone: str  # clt.backbone
    cls: LayerTokenScores  # reconstruction of the CLS tokens
    patch: LayerTokenScores  # of the patch tokens
    replacement: ReplacedAccuracy  # the ViT's test accuracy with MLP outputs from the CLT
    asymmetry: Asymmetry  # off-diagonal shares


class CLTCompareRecord(Record):
    STAGE: ClassVar[str] = "clt_compare@<name>"

    backbone: str  # the entry
    cls: TokenScores  # reconstruction of the CLS tokens
    patch: TokenScores  # of the patch tokens
    asymmetry: Asymmetry  # off-diagonal shares


class SweepPoint(Part):
    """One model of the frontier sweep (laya.clt.frontier.fit_point), scored on the test tokens."""

    cls_r2: float
    cls_cosine: float
    cls_l0: float
    cls_dead_fraction: float
    cls_dense_fraction: float
    cls_fvu_per_layer: list[float]
    cls_replaced_accuracy: float  # the ViT's test accuracy, CLS MLP outputs from this model
    patch_r2: float
    patch_cosine: float
    patch_l0: float
    patch_dead_fraction: float
    patch_dense_fraction: float
    patch_fvu_per_layer: list[float]


class FrontierRecord(Record):
    """original_accuracy beside one SweepPoint per model, keyed by laya.clt.frontier.label ('relu_topk_k16',
    'sae_relu_topk_k16', 'jumprelu_l0.003', …)."""

    STAGE: ClassVar[str] = "clt_frontier"
    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, SweepPoint]

    original_accuracy: float  # the ViT's test accuracy, nothing replaced

    @property
    def points(self) -> dict[str, SweepPoint]:
        return dict(self.__pydantic_extra__)
