"""Frozen backbones: the reference MLP, a small CNN, a small timm ViT, or any timm model by name.

Names are imported on first use, so a stage that only reads a backbone's card (train) does not import — and its
DVC stage does not depend on — the training code.
"""

import importlib

__all__ = ["ARCHS", "BackboneCard", "BackboneConfig", "build_model", "create_backbone", "load_backbone",
           "save_backbone"]
_LAZY = {"ARCHS": "laya.backbones.config", "BackboneCard": "laya.backbones.card",
         "BackboneConfig": "laya.backbones.config", "build_model": "laya.backbones.build",
         "create_backbone": "laya.backbones.create", "load_backbone": "laya.backbones.build",
         "save_backbone": "laya.backbones.build"}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'laya.backbones' has no attribute {name!r}")
