"""Output heads over a backbone's layers: LastLayer, Concat, ScalarMix and LAYA, one registry, one verb set.

    head = laya.heads.build("laya", dims=[512, 256, 128], num_classes=10, tau=1.5)
    logits = head(layers)              # layers: list of (B, d_i) tensors
    alpha = head.layer_weights(layers)  # (B, L) or None
"""

from laya.heads.aligned import AlignedLAYA, AlignedLAYAConfig
from laya.heads.attention import LAYA, JointLAYA, LAYAConfig
from laya.heads.base import LayerHead
from laya.heads.card import HeadCard, head_folder, load, load_with_card, save
from laya.heads.linear import Concat, LastLayer, LinearConfig
from laya.heads.registry import CACHE_HEADS, HEADS, JOINT_HEAD, build, parse_config
from laya.heads.scalarmix import ScalarMix, ScalarMixConfig

__all__ = ["CACHE_HEADS", "HEADS", "JOINT_HEAD", "LAYA", "AlignedLAYA", "AlignedLAYAConfig", "Concat", "HeadCard",
           "JointLAYA", "LAYAConfig", "LastLayer", "LayerHead", "LinearConfig", "ScalarMix", "ScalarMixConfig",
           "build", "head_folder", "load", "load_with_card", "parse_config", "save"]
