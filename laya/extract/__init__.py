"""Per-layer activation extraction from frozen backbones into sharded Zarr stores."""

from laya.extract.config import ExtractConfig
from laya.extract.features import extract_features, fingerprint
from laya.extract.taps import LayerTap

__all__ = ["ExtractConfig", "LayerTap", "extract_features", "fingerprint"]
