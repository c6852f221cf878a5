"""α put to work on depth (stage depth@<name>): layer pruning ranked by α and early exit guided by α, each
measured beside its standard baselines in the same run, with backbone FLOPs counted by torch."""

from laya.depth.config import DepthConfig

__all__ = ["DepthConfig"]
