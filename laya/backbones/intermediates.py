"""timm's `forward_intermediates` contract for laya's own block-stacked backbones (MLP, CNN).

`indices`: None = every block, an int n = the last n blocks, a list = those block indices (negative from the
end). Returns the selected blocks' outputs in depth order, alone (`intermediates_only=True`) or after the final
features: (final, intermediates) — the same shapes timm's models return.
"""

from __future__ import annotations

import torch
from torch import nn

POOLINGS = ("cls", "mean")  # how a token layer (B, T, d) becomes (B, d): its CLS token or the mean of its patches


def take_indices(num_blocks: int, indices: int | list[int] | None) -> list[int]:
    """Block indices selected by `indices` (timm's `feature_take_indices` semantics), validated."""
    if indices is None:
        return list(range(num_blocks))
    if isinstance(indices, int):
        if not 0 < indices <= num_blocks:
            raise ValueError(f"indices={indices}: take the last 1..{num_blocks} blocks")
        return list(range(num_blocks - indices, num_blocks))
    taken = [i % num_blocks if -num_blocks <= i < num_blocks else None for i in indices]
    if None in taken:
        raise ValueError(f"indices={list(indices)}: block indices must lie in -{num_blocks}..{num_blocks - 1}")
    return sorted(set(taken))


class BlockStack(nn.Module):
    """A backbone that is `stem(x)` → `blocks` in sequence → `pool` → `head`; each block output is one layer."""

    blocks: nn.ModuleList
    head: nn.Module

    def stem(self, x: torch.Tensor) -> torch.Tensor:
        return x

    def pool(self, x: torch.Tensor) -> torch.Tensor:
        return x

    @property
    def feature_info(self) -> list[dict]:
        """timm-style: one entry per block, named by its module path."""
        return [{"module": f"blocks.{i}"} for i in range(len(self.blocks))]

    def forward_intermediates(self, x: torch.Tensor, indices: int | list[int] | None = None,
                              intermediates_only: bool = False):
        take = take_indices(len(self.blocks), indices)
        x, intermediates = self.stem(x), []
        for i, block in enumerate(self.blocks):
            x = block(x)
            if i in take:
                intermediates.append(x)
            if intermediates_only and i == take[-1]:
                return intermediates
            x = self.between_blocks(x)
        return self.pool(x), intermediates

    def between_blocks(self, x: torch.Tensor) -> torch.Tensor:
        """What runs after a block's output is recorded and before the next block (e.g. training dropout)."""
        return x

    def forward_features(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stem(x)
        for block in self.blocks:
            x = self.between_blocks(block(x))
        return self.pool(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.forward_features(x))

    def get_classifier(self) -> nn.Module:
        return self.head
