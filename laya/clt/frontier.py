"""One point of the `clt_frontier` sweep as a job for laya.core.parallel.run_jobs: train a CLT, score it on the test
tokens and by replacement accuracy. A worker reads the cache's tokens once and reuses them for its next points."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from laya.clt.config import CLTConfig
from laya.clt.replace import Replacement
from laya.clt.run import ViTCache, reconstruction, replaced_accuracy, test_tokens, train_clt
from laya.clt.tokens import Tokens, load_tokens
from laya.records.clt import SweepPoint


@dataclass(frozen=True)
class FrontierPoint:
    features: str  # the ViT's feature store
    backbone: str  # the frozen ViT's folder
    data: str  # the prepared dataset (test images for replacement)
    cfg: CLTConfig  # this point's settings (activation, k or λ, epochs, max_images, …)
    device: str


@lru_cache(maxsize=1)
def _inputs(features: str, backbone: str, data: str, kind: str, max_images: int | None
            ) -> tuple[ViTCache, Tokens, dict[str, Tokens]]:
    cache = ViTCache.open(features, backbone, data)
    return cache, load_tokens(cache.store, "train", kind, max_images), test_tokens(cache.store)


def label(point: dict) -> str:
    """'relu_topk_k16', 'jumprelu_l0.003' for the CLT; the per-layer baselines prefixed: 'sae_relu_topk_k16'."""
    name = f"{point['activation']}_k{point['k']}" if point["k"] is not None else f"jumprelu_l{point['sparsity']:g}"
    return name if point["architecture"] == "clt" else f"{point['architecture']}_{name}"


def fit_point(point: FrontierPoint) -> dict:
    """{"architecture", "activation", "k", "sparsity", "{cls,patch}_{r2,cosine,l0,dead_fraction,dense_fraction}",
    "{cls,patch}_fvu_per_layer", "cls_replaced_accuracy"}."""
    cfg = point.cfg
    cache, train, tests = _inputs(point.features, point.backbone, point.data, cfg.tokens, cfg.max_images)
    desc = f"{cfg.architecture} {cfg.activation} k={cfg.k} λ={cfg.sparsity:g}"
    model, _ = train_clt(cache.store, cfg, train, point.device, desc=desc)
    result = {"architecture": cfg.architecture, "activation": cfg.activation,
              "k": cfg.k if cfg.activation != "jumprelu" else None,
              "sparsity": cfg.sparsity if cfg.activation == "jumprelu" else None}
    for kind, m in reconstruction(model, tests, point.device).items():
        result.update({f"{kind}_{name}": round(m[name], 6)
                       for name in ("r2", "cosine", "l0", "dead_fraction", "dense_fraction")})
        result[f"{kind}_fvu_per_layer"] = m["per_layer"]["fvu"]
    result["cls_replaced_accuracy"] = replaced_accuracy(cache, point.device, model, Replacement("cls"))
    print(f"  {desc}: CLS R² {result['cls_r2']:.4f}, patch R² {result['patch_r2']:.4f}", flush=True)
    return result


def sweep_point(point: dict) -> SweepPoint:
    """fit_point's scores of one model, without the settings that its label names."""
    return SweepPoint(**{k: v for k, v in point.items() if k not in ("architecture", "activation", "k", "sparsity")})


def release() -> None:
    """Drop the tokens this process keeps for its next points."""
    _inputs.cache_clear()
