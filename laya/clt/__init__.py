"""Cross-layer transcoders (arXiv 2604.13304): sparse, causal stand-ins for a ViT's MLP blocks, trained from
the feature cache; reconstruction metrics, replacement accuracy and layer-to-layer contribution scores.

Names are imported on first use, so a stage that only reads the `clt` params (extract: which backbone's MLP
inputs/outputs to cache) does not import — and its DVC stage does not depend on — the transcoder code.
"""

import importlib

__all__ = ["ACTIVATIONS", "CLTConfig", "CrossLayerTranscoder", "FrontierConfig", "TOKEN_KINDS", "Tokens",
           "contribution_shares", "load_clt", "load_tokens", "save_clt"]
_LAZY = {"ACTIVATIONS": "laya.clt.activations", "CLTConfig": "laya.clt.config", "FrontierConfig": "laya.clt.config",
         "TOKEN_KINDS": "laya.clt.config", "CrossLayerTranscoder": "laya.clt.model",
         "contribution_shares": "laya.clt.model", "load_clt": "laya.clt.card", "save_clt": "laya.clt.card",
         "Tokens": "laya.clt.tokens", "load_tokens": "laya.clt.tokens"}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'laya.clt' has no attribute {name!r}")
