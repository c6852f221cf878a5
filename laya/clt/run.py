"""Stage logic for `clt` and `clt_frontier`: train a CLT from the cache, score its reconstructions, run the
replacement ViT and the source-layer ablations."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from laya.backbones import load_backbone
from laya.clt.config import TOKEN_POSITIONS, CLTConfig
from laya.clt.contributions import mean_contributions
from laya.clt.fit import fit_clt
from laya.clt.metrics import reconstruction_metrics
from laya.clt.model import CrossLayerTranscoder
from laya.clt.replace import ReplacedViT, Replacement
from laya.clt.tokens import Tokens, load_tokens
from laya.data import PreparedData
from laya.images import Preprocess, accuracy
from laya.storage.store import FeatureStore


@dataclass
class ViTCache:
    """A ViT's feature cache with the frozen ViT it was built from and its test images (for replacement runs)."""

    store: FeatureStore
    vit: nn.Module
    preprocess: Preprocess
    images: np.ndarray  # (N, H, W, C) uint8 test images
    labels: np.ndarray  # (N,) test labels

    @classmethod
    def open(cls, features: str | Path, backbone: str | Path, data: str | Path) -> ViTCache:
        """Open all three; a cache built from other weights or data is refused (one-line error with the fix)."""
        store = FeatureStore.open(features)
        vit, card = load_backbone(backbone)
        store.check_built_from(card)
        prepared = PreparedData(data)
        return cls(store, vit, card.preprocess(), prepared.images("test"), prepared.labels("test"))


def train_clt(store: FeatureStore, cfg: CLTConfig, train: Tokens | None = None,
              device: torch.device | str = "cpu", desc: str = "clt") -> tuple[CrossLayerTranscoder, list[dict]]:
    """A CLT fitted to `train` (default: cfg.tokens of the training split) with seed cfg.seed."""
    train = train if train is not None else load_tokens(store, "train", cfg.tokens, cfg.max_images)
    torch.manual_seed(cfg.seed)
    model = CrossLayerTranscoder(train.x.shape[1], train.x.shape[2], cfg)
    x_mean, x_scale, y_mean, y_scale = train.standardisation()
    if model.reads_outputs:  # an SAE encodes the standardised outputs
        x_mean, x_scale = y_mean, y_scale
    model.set_standardisation(x_mean, x_scale, y_mean, y_scale)
    history = fit_clt(model, train, cfg, device, desc)
    return model.cpu().eval(), history


def test_tokens(store: FeatureStore) -> dict[str, Tokens]:
    """The test split's tokens of each position (metrics are always reported for CLS and patch tokens)."""
    return {kind: load_tokens(store, "test", kind) for kind in TOKEN_POSITIONS}


def reconstruction(model: CrossLayerTranscoder, tests: dict[str, Tokens], device: torch.device | str = "cpu") -> dict:
    """{'cls': metrics, 'patch': metrics} on the test tokens of each kind."""
    return {kind: reconstruction_metrics(model.to(device), tokens, device=device) for kind, tokens in tests.items()}


def contributions(model: CrossLayerTranscoder, tests: dict[str, Tokens],
                  device: torch.device | str = "cpu") -> dict[str, list[list[float]]]:
    """Mean share matrices C[target, source] per token kind."""
    return {kind: np.round(mean_contributions(model.to(device), tokens, device=device), 6).tolist()
            for kind, tokens in tests.items()}


def replaced_accuracy(cache: ViTCache, device: torch.device | str = "cpu", model: CrossLayerTranscoder | None = None,
                      plan: Replacement | None = None) -> float:
    """Test accuracy of the cached ViT: as is, or with its MLP outputs replaced by `model`'s as `plan` says."""
    vit, preprocess = cache.vit.to(device).eval(), cache.preprocess.to(device)
    predict = vit if plan is None else ReplacedViT(vit, model.to(device), plan).logits
    return accuracy(predict, cache.images, cache.labels, preprocess, batch_size=1000, device=device)


def replacement_accuracies(model: CrossLayerTranscoder, cache: ViTCache, replace_from: int,
                           device: torch.device | str = "cpu") -> dict:
    """Test accuracy of the ViT as is and with MLP outputs replaced by the CLT's (see laya.clt.replace)."""
    layers = model.num_layers

    def run(plan: Replacement) -> float:
        return replaced_accuracy(cache, device, model, plan)

    return {
        "original": replaced_accuracy(cache, device),
        "cls": run(Replacement("cls")),
        "patch": run(Replacement("patch")),
        "patch_from_layer": run(Replacement("patch", from_layer=replace_from)),
        "cls_without_top_source": run(Replacement("cls", drop_top=True)),
        "cls_top_sources": {str(k): run(Replacement("cls", keep_top=k)) for k in range(1, layers + 1)},
    }


