"""Figures of the evaluation (PNG): α per layer, class × layer α, faithfulness/Deletion@1 per method,
deletion curves, method agreement. Each takes the depth-pattern / metrics dicts the evaluate stage writes."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    _pyplot().close(fig)
    return path


def alpha_per_layer(patterns: dict, title: str, path: Path) -> Path:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(4, 0.9 * len(patterns["layers"]) + 2), 3.2))
    x = np.arange(len(patterns["layers"]))
    ax.bar(x, patterns["alpha_mean"], yerr=patterns["alpha_std"], capsize=4, color="#4c72b0")
    ax.set_xticks(x, patterns["layers"], rotation=30, ha="right")
    ax.set_ylabel("mean α (± std over test inputs)")
    ax.set_title(title)
    return _save(fig, path)


def _class_matrix(patterns: dict, key: str) -> np.ndarray:
    return np.array([row if row is not None else [np.nan] * len(patterns["layers"]) for row in patterns[key]])


def _heatmap(ax, matrix: np.ndarray, patterns: dict, title: str, labels: bool = True):
    image = ax.imshow(matrix, cmap="viridis", aspect="auto", vmin=0, vmax=1)
    ax.set_xticks(range(len(patterns["layers"])), patterns["layers"], rotation=30, ha="right")
    ax.set_yticks(range(len(patterns["classes"])), patterns["classes"] if labels else [])
    for (i, j), value in np.ndenumerate(matrix):
        if not np.isnan(value):
            ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=7,
                    color="white" if value < 0.5 else "black")
    ax.set_title(title)
    return image


def correct_vs_wrong_heatmaps(patterns: dict, title: str, path: Path) -> Path:
    """Mean α by true class, for correctly and wrongly predicted inputs side by side (blank: no such input)."""
    plt = _pyplot()
    rows, cols = len(patterns["classes"]), len(patterns["layers"])
    fig, axes = plt.subplots(1, 2, figsize=(2 * max(3.5, 0.8 * cols + 1.5) + 1.5, 0.38 * rows + 1.8))
    _heatmap(axes[0], _class_matrix(patterns, "alpha_by_class_correct"), patterns, "correct predictions")
    image = _heatmap(axes[1], _class_matrix(patterns, "alpha_by_class_wrong"), patterns, "wrong predictions",
                     labels=False)
    fig.colorbar(image, ax=axes, label="mean α")
    fig.suptitle(title)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path


def class_layer_heatmap(patterns: dict, title: str, path: Path) -> Path:
    plt = _pyplot()
    matrix = _class_matrix(patterns, "alpha_by_class")
    fig, ax = plt.subplots(figsize=(max(4.5, 0.9 * len(patterns["layers"]) + 3), 0.38 * len(matrix) + 1.6))
    image = ax.imshow(matrix, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(patterns["layers"])), patterns["layers"], rotation=30, ha="right")
    ax.set_yticks(range(len(patterns["classes"])), patterns["classes"])
    for (i, j), value in np.ndenumerate(matrix):
        if not np.isnan(value):
            ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=7,
                    color="white" if value < np.nanmean(matrix) else "black")
    fig.colorbar(image, ax=ax, label="mean α")
    ax.set_title(title)
    return _save(fig, path)


def method_scores(metrics: dict, title: str, path: Path) -> Path:
    plt = _pyplot()
    methods = list(metrics["faithfulness"])
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    for ax, key, label in ((axes[0], "faithfulness", "faithfulness (Spearman with LOO)"),
                           (axes[1], "deletion_at_1", "Deletion@1 (drop in p_c)")):
        values = [metrics[key][m] for m in methods]
        ax.bar(methods, values, color=["#dd8452" if m in ("laya", "scalarmix") else "#4c72b0" for m in methods])
        ax.set_ylabel(label)
        ax.tick_params(axis="x", rotation=30)
        for i, value in enumerate(values):
            ax.text(i, value, f"{value:.2f}", ha="center", va="bottom", fontsize=8)
    fig.suptitle(title)
    return _save(fig, path)


def deletion_curves(patterns: dict, title: str, path: Path) -> Path:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for method, curve in patterns["deletion_curves"].items():
        ax.plot(range(len(curve)), curve, marker="o", label=method)
    ax.set_xlabel("top-ranked layers removed")
    ax.set_ylabel("p(predicted class)")
    ax.set_xticks(range(len(patterns["layers"]) + 1))
    ax.legend(fontsize=7)
    ax.set_title(title)
    return _save(fig, path)


def agreement_matrix(patterns: dict, title: str, path: Path) -> Path:
    plt = _pyplot()
    names = patterns["agreement"]["methods"]
    matrix = np.array(patterns["agreement"]["spearman"], dtype=float)
    fig, ax = plt.subplots(figsize=(0.7 * len(names) + 2.5, 0.6 * len(names) + 1.8))
    image = ax.imshow(matrix, cmap="coolwarm", vmin=-1, vmax=1)
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
    ax.set_yticks(range(len(names)), names)
    for (i, j), value in np.ndenumerate(matrix):
        ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=7)
    fig.colorbar(image, ax=ax, label="mean Spearman")
    ax.set_title(title)
    return _save(fig, path)
