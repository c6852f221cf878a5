"""One figure per explained input: the image, each layer's map over it (titled with α_l), the α-weighted map with
the cells the deletion check removes outlined, and α as bars; for a CNN, the same row of LRP relevance below."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from laya.core.plots import _pyplot, _save
from laya.spatial.deletion import top_cells
from laya.spatial.explanations import LRP, SpatialResult


def _upsample(grid: np.ndarray, height: int, width: int) -> np.ndarray:
    """Nearest-neighbour upsampling for display: each cell of (h, w) covers its block of the image."""
    rows = np.minimum(np.arange(height) * grid.shape[0] // height, grid.shape[0] - 1)
    cols = np.minimum(np.arange(width) * grid.shape[1] // width, grid.shape[1] - 1)
    return grid[np.ix_(rows, cols)]


def input_figure(result: SpatialResult, row: int, classes: list[str], title: str, path: Path) -> Path:
    """The image, each layer's map (α_l above it), the α-weighted map with its deleted cells outlined, α as bars;
    where LRP ran (laya.spatial.lrp), a second row: each block's relevance and the pixel relevance."""
    plt = _pyplot()
    image = result.images[row]
    gray = image[..., 0] if image.shape[-1] == 1 else image
    panels = len(result.layers) + 2
    rows = 2 if result.lrp_maps is not None else 1
    fig, axes = plt.subplots(rows, panels + 1, figsize=(1.6 * (panels + 1) + 0.6, 2.3 * rows), squeeze=False,
                             gridspec_kw={"width_ratios": [1] * panels + [1.4]})
    alpha = result.alpha[row]
    _maps_row(axes[0], result, row, gray, result.maps, [f"{n}\nα={a:.2f}" for n, a in zip(result.layers, alpha)],
              "alpha", "α-weighted")
    axes[0, 0].set_title(f"{classes[int(result.target[row])]}\np={result.probability[row]:.2f}", fontsize=7)
    if rows == 2:
        _maps_row(axes[1], result, row, gray, result.lrp_maps, [f"{n}\nLRP" for n in result.layers], LRP,
                  "LRP, pixels")
        axes[1, 0].set_title("relevance\n(LRP, zennit)", fontsize=7)
        axes[1, panels].axis("off")
    bars = axes[0, panels]
    bars.barh(range(len(alpha)), alpha, color="#c44e52")
    bars.set_yticks(range(len(alpha)), [name.split(".")[-1] for name in result.layers], fontsize=6)
    bars.invert_yaxis()
    bars.set_xlim(0, 1)
    bars.set_title("α(x) per layer", fontsize=7)
    bars.tick_params(axis="x", labelsize=6)
    fig.suptitle(title, fontsize=8)
    return _save(fig, path)


def _maps_row(axes, result: SpatialResult, row: int, gray: np.ndarray, maps: list[np.ndarray], titles: list[str],
              score_name: str, score_title: str) -> None:
    """One row of panels: the image, a map per layer over it, then a score with the deleted cells outlined."""
    import torch

    height, width = gray.shape[:2]
    cmap = "gray" if gray.ndim == 2 else None
    axes[0].imshow(gray, cmap=cmap)
    for ax, grid, text in zip(axes[1:], maps, titles):
        ax.imshow(gray, cmap=cmap)
        ax.imshow(_upsample(grid[row], height, width), cmap="inferno", alpha=0.55, vmin=0, vmax=1)
        ax.set_title(text, fontsize=7)
    score = result.scores[score_name][row]
    deleted = top_cells(torch.from_numpy(score[None]), result.cells)[0].numpy()
    ax = axes[len(maps) + 1]
    ax.imshow(score, cmap="inferno")
    ax.contour(deleted, levels=[0.5], colors="cyan", linewidths=0.6)
    ax.set_title(f"{score_title}\ndrop {result.drops[score_name][row]:+.2f}", fontsize=7)
    for ax in axes[:len(maps) + 2]:
        ax.set_xticks([])
        ax.set_yticks([])
