"""Frozen backbones: the reference MLP, a small CNN, a small timm ViT, or any timm model by name."""

from laya.backbones.build import build_model, load_backbone, save_backbone
from laya.backbones.config import ARCHS, BackboneConfig
from laya.backbones.create import create_backbone
from laya.backbones.fit import Preprocess

__all__ = ["ARCHS", "BackboneConfig", "Preprocess", "build_model", "create_backbone", "load_backbone",
           "save_backbone"]
