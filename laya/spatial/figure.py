"""One figure per explained input: the image, each layer's map over it (titled with α_l), the α-weighted map with
the cells the deletion check removes outlined, and α as bars."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from laya.core.plots import _pyplot, _save
from laya.spatial.deletion import top_cells
from laya.spatial.explanations import SpatialResult


def _upsample(grid: np.ndarray, height: int, width: int) -> np.ndarray:
    """Nearest-neighbour upsampling for display: each cell of (h, w) covers its block of the image."""
    rows = np.minimum(np.arange(height) * grid.shape[0] // height, grid.shape[0] - 1)
    cols = np.minimum(np.arange(width) * grid.shape[1] // width, grid.shape[1] - 1)
    return grid[np.ix_(rows, cols)]


def input_figure(result: SpatialResult, row: int, classes: list[str], title: str, path: Path) -> Path:
    import torch

    plt = _pyplot()
    image = result.images[row]
    gray = image[..., 0] if image.shape[-1] == 1 else image
    height, width = image.shape[:2]
    panels = len(result.layers) + 2
    fig, axes = plt.subplots(1, panels + 1, figsize=(1.6 * (panels + 1) + 0.6, 2.3),
                             gridspec_kw={"width_ratios": [1] * panels + [1.4]})
    axes[0].imshow(gray, cmap="gray" if gray.ndim == 2 else None)
    axes[0].set_title(f"{classes[int(result.target[row])]}\np={result.probability[row]:.2f}", fontsize=7)
    alpha = result.alpha[row]
    for ax, name, grid, a in zip(axes[1:], result.layers, result.maps, alpha):
        ax.imshow(gray, cmap="gray" if gray.ndim == 2 else None)
        ax.imshow(_upsample(grid[row], height, width), cmap="inferno", alpha=0.55, vmin=0, vmax=1)
        ax.set_title(f"{name}\nα={a:.2f}", fontsize=7)
    score = result.scores["alpha"][row]
    deleted = top_cells(torch.from_numpy(score[None]), result.cells)[0].numpy()
    ax = axes[panels - 1]
    ax.imshow(score, cmap="inferno")
    ax.contour(deleted, levels=[0.5], colors="cyan", linewidths=0.6)
    ax.set_title(f"α-weighted\ndrop {result.drops['alpha'][row]:+.2f}", fontsize=7)
    for ax in axes[:panels]:
        ax.set_xticks([])
        ax.set_yticks([])
    bars = axes[panels]
    bars.barh(range(len(alpha)), alpha, color="#c44e52")
    bars.set_yticks(range(len(alpha)), [name.split(".")[-1] for name in result.layers], fontsize=6)
    bars.invert_yaxis()
    bars.set_xlim(0, 1)
    bars.set_title("α(x) per layer", fontsize=7)
    bars.tick_params(axis="x", labelsize=6)
    fig.suptitle(title, fontsize=8)
    return _save(fig, path)
