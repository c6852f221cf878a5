"""Output heads over a backbone's layers: LastLayer, Concat, ScalarMix and LAYA, one registry, one verb set.

    head = laya.heads.build("laya", dims=[512, 256, 128], num_classes=10, tau=1.5)
    logits = head(layers)              # layers: list of (B, d_i) tensors
    alpha = head.layer_weights(layers)  # (B, L) or None
"""

from laya.heads.attention import LAYA
from laya.heads.base import LayerHead
from laya.heads.linear import Concat, LastLayer
from laya.heads.registry import HEADS, build, load, save
from laya.heads.scalarmix import ScalarMix

__all__ = ["HEADS", "LAYA", "Concat", "LastLayer", "LayerHead", "ScalarMix", "build", "load", "save"]
