"""A small timm VisionTransformer built from params (`arch: vit`); timm imports only when one is built."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from torch import nn

from laya.core.config import require


@dataclass(frozen=True)
class ViTConfig:
    """params `backbones.<name>.model` for arch vit: keyword arguments of timm's VisionTransformer."""

    patch_size: int = 7  # side of the square patches (28 / 7 = 4 × 4 patches)
    embed_dim: int = 64  # token width
    depth: int = 6  # blocks; each block's CLS token (or mean patch token) is one cached layer
    num_heads: int = 4  # attention heads per block
    mlp_ratio: float = 4.0  # MLP width / embed_dim
    qkv_bias: bool = True  # bias on the query, key and value projections
    drop_rate: float = 0.0  # dropout after the patch embedding and in the MLPs
    drop_path_rate: float = 0.0  # stochastic depth (training only)

    def validate(self, key: str) -> None:
        for name in ("patch_size", "embed_dim", "depth", "num_heads"):
            require(getattr(self, name) > 0, f"{key}.{name}", getattr(self, name), "a positive integer")
        require(self.embed_dim % self.num_heads == 0, f"{key}.embed_dim", self.embed_dim,
                f"a multiple of num_heads ({self.num_heads})")
        require(self.mlp_ratio > 0, f"{key}.mlp_ratio", self.mlp_ratio, "a positive number")


def build_vit(in_chans: int, img_size: int, num_classes: int, cfg: ViTConfig) -> nn.Module:
    from timm.models.vision_transformer import VisionTransformer  # seconds to import: only for ViTs

    return VisionTransformer(img_size=img_size, in_chans=in_chans, num_classes=num_classes, **asdict(cfg))
