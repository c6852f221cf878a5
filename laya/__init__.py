"""laya — depth-aware interpretability: per-layer activation caches, LAYA heads, faithfulness, transcoders.

Submodules are imported on first use, so a stage script pulls in (and its DVC stage depends on) only the
modules it really needs.
"""

import importlib

__version__ = "0.1.0"
__all__ = ["ConfigError", "FeatureStore", "__version__"]
_LAZY = {"ConfigError": "laya.core.config", "FeatureStore": "laya.storage.store"}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'laya' has no attribute {name!r}")
