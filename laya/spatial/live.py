"""A frozen backbone and a trained head as one differentiable function of raw images: the layers the cache holds,
computed live, then the head — what the spatial maps differentiate."""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from laya.backbones import load_backbone
from laya.extract.taps import LayerTap, has_vit_blocks
from laya.heads import LayerHead


class LiveModel:
    """`logits(images)`: uint8 images (B, H, W, C) → the head's logits (B, classes), through the
    backbone's preprocessing and the pooled layers the head reads (`layer_indices` of the store's layers)."""

    def __init__(self, backbone: nn.Module, preprocess: nn.Module, head: LayerHead, layer_indices: list[int],
                 pooling: str):
        self.backbone, self.preprocess, self.head = backbone.eval(), preprocess.eval(), head.eval()
        self.tap = LayerTap(backbone, pooling)
        self.layer_indices = list(layer_indices)
        self.pooling = pooling

    @classmethod
    def load(cls, backbone_dir: str | Path, head: LayerHead, layer_indices: list[int], pooling: str) -> LiveModel:
        model, card = load_backbone(backbone_dir)
        return cls(model, card.preprocess(), head, layer_indices, pooling)

    @property
    def layer_names(self) -> list[str]:
        return [self.tap.names[i] for i in self.layer_indices]

    def module(self, name: str) -> nn.Module:
        return dict(self.backbone.named_modules())[name]

    @property
    def is_vit(self) -> bool:
        return has_vit_blocks(self.backbone)

    @property
    def is_builtin_cnn(self) -> bool:
        """laya's own CNN (arch cnn): Conv → BatchNorm → GELU blocks that zennit's rules cover (laya.spatial.lrp); a
        timm CNN's residual sums are no modules a rule can be given to."""
        from laya.backbones.cnn import CNNBackbone

        return isinstance(self.backbone, CNNBackbone)

    def layers(self, images: torch.Tensor) -> list[torch.Tensor]:
        """The head's L layers (B, d_i); with autograd on, every activation is in the graph (the backbone's
        weights are frozen, so the preprocessed input is made to require gradients)."""
        x = self.preprocess(images)
        if torch.is_grad_enabled() and not x.requires_grad:
            x.requires_grad_(True)
        pooled = self.tap.pooled(x)
        return [pooled[i] for i in self.layer_indices]

    def logits(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.layers(images))

    @torch.no_grad()
    def outputs(self, images: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(probabilities (B, C), α (B, L)) of the head on live layers."""
        layers = self.layers(images)
        return self.head(layers).softmax(1), self.head.layer_weights(layers)
