"""One point of the `clt_frontier` sweep as a job for laya.parallel.run_jobs: train a CLT, score it on the test
tokens and by replacement accuracy. A worker reads the cache's tokens once and reuses them for its next points."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from laya.clt.config import CLTConfig
from laya.clt.replace import Replacement
from laya.clt.run import ViTCache, reconstruction, replaced_accuracy, test_tokens, train_clt
from laya.clt.tokens import Tokens, load_tokens


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


def fit_point(point: FrontierPoint) -> dict:
    """{"activation", "k", "sparsity", "{cls,patch}_{r2,cosine,l0,dead_fraction}", "cls_replaced_accuracy"}."""
    cfg = point.cfg
    cache, train, tests = _inputs(point.features, point.backbone, point.data, cfg.tokens, cfg.max_images)
    model, _ = train_clt(cache.store, cfg, train, point.device, desc=f"{cfg.activation} k={cfg.k} λ={cfg.sparsity:g}")
    result = {"activation": cfg.activation, "k": cfg.k if cfg.activation != "jumprelu" else None,
              "sparsity": cfg.sparsity if cfg.activation == "jumprelu" else None}
    for kind, m in reconstruction(model, tests, point.device).items():
        result.update({f"{kind}_{name}": round(m[name], 6) for name in ("r2", "cosine", "l0", "dead_fraction")})
    result["cls_replaced_accuracy"] = replaced_accuracy(cache, point.device, model, Replacement("cls"))
    print(f"  {cfg.activation} k={cfg.k} λ={cfg.sparsity:g}: CLS R² {result['cls_r2']:.4f}, patch R² "
          f"{result['patch_r2']:.4f}", flush=True)
    return result


def release() -> None:
    """Drop the tokens this process keeps for its next points."""
    _inputs.cache_clear()
