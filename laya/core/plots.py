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
    fig.savefig(path, dpi=120, format="png")  # explicit: outputs are written under temporary names
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


def _shift_label(shift: dict | None) -> str:
    """'p = 0.012 (n = 31)': a class's permutation-test p-value and its count of wrong inputs."""
    if shift is None:
        return "—"
    return f"n = {shift['wrong']}" if shift["p_value"] is None else f"p = {shift['p_value']:.3f} (n = {shift['wrong']})"


def correct_vs_wrong_heatmaps(patterns: dict, title: str, path: Path) -> Path:
    """Mean α by true class, for correctly and wrongly predicted inputs side by side (blank: no such input)."""
    plt = _pyplot()
    rows, cols = len(patterns["classes"]), len(patterns["layers"])
    fig, axes = plt.subplots(1, 2, figsize=(2 * max(3.5, 0.8 * cols + 1.5) + 1.5, 0.38 * rows + 1.8))
    _heatmap(axes[0], _class_matrix(patterns, "alpha_by_class_correct"), patterns, "correct predictions")
    image = _heatmap(axes[1], _class_matrix(patterns, "alpha_by_class_wrong"), patterns, "wrong predictions",
                     labels=False)
    shifts = patterns.get("alpha_shift_by_class")
    if shifts is not None:  # the permutation test's p-value of each class's shift, right of the wrong panel
        axes[1].set_yticks(range(rows), [_shift_label(s) for s in shifts])
        axes[1].yaxis.tick_right()
        axes[1].tick_params(axis="y", labelsize=7)
    fig.colorbar(image, ax=axes, label="mean α", pad=0.12 if shifts is not None else 0.05)
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


def method_scores(metrics: dict, title: str, path: Path, highlight: list[str] = (), spread: dict | None = None,
                  seeds: int = 1) -> Path:
    """Bars of `metrics[group][label]` for the faithfulness and Deletion@1 groups, with ± `spread[group][label]`
    error bars (the std over `seeds` seeds) when given; `highlight` labels (the heads' own layer weights) in
    orange."""
    plt = _pyplot()
    methods = list(metrics["faithfulness"])
    fig, axes = plt.subplots(1, 2, figsize=(max(9, 1.1 * len(methods) + 3), 3.6))
    for ax, key, label in ((axes[0], "faithfulness", "faithfulness (Spearman with LOO)"),
                           (axes[1], "deletion_at_1", "Deletion@1 (drop in p_c)")):
        values = [metrics[key][m] for m in methods]
        errors = [spread[key][m] for m in methods] if spread and seeds > 1 else None
        ax.bar(methods, values, yerr=errors, capsize=3 if errors else 0,
               color=["#dd8452" if m in highlight else "#4c72b0" for m in methods])
        ax.set_ylabel(label + (f"\n(mean ± std, {seeds} seeds)" if errors else ""))
        ax.margins(y=0.12)
        ax.tick_params(axis="x", rotation=30)
        for i, value in enumerate(values):  # above the error bar, so the two never overlap
            ax.text(i, value + (errors[i] if errors else 0), f"{value:.2f}", ha="center", va="bottom", fontsize=8)
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


FAILURE_LABELS = {"msp": "MSP (baseline)", "alpha": "α + H(α), fitted on val", "msp_alpha": "MSP + α, fitted on val"}


def failure_roc(curves: dict, title: str, path: Path) -> Path:
    """ROC of error detection on test, one line per detector {name: (fpr, tpr)}; the legend has its AUROC."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(4.8, 4.2))
    for detector, (fpr, tpr) in curves.items():
        ax.plot(fpr, tpr, label=f"{FAILURE_LABELS.get(detector, detector)} — AUROC {np.trapezoid(tpr, fpr):.3f}")
    ax.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=1)
    ax.set_xlabel("false positive rate (correct flagged)")
    ax.set_ylabel("true positive rate (errors flagged)")
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title(title, fontsize=9)
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


# -- cross-layer transcoder figures (stage clt / clt_frontier) --


def contribution_heatmap(matrix: list[list[float]], layers: list[str], title: str, path: Path) -> Path:
    """C[target j, source i]: mean share of block j's MLP output built from block i (blank above the diagonal)."""
    plt = _pyplot()
    values = np.array(matrix, dtype=float)
    values[np.triu_indices_from(values, 1)] = np.nan
    fig, ax = plt.subplots(figsize=(0.8 * len(layers) + 2.5, 0.7 * len(layers) + 1.8))
    image = ax.imshow(values, cmap="viridis", vmin=0, vmax=1)
    ax.set_xticks(range(len(layers)), layers, rotation=30, ha="right")
    ax.set_yticks(range(len(layers)), layers)
    ax.set_xlabel("source layer i (encoder)")
    ax.set_ylabel("target layer j (reconstructed MLP output)")
    for (j, i), value in np.ndenumerate(values):
        if not np.isnan(value):
            ax.text(i, j, f"{value:.2f}", ha="center", va="center", fontsize=7,
                    color="white" if value < 0.5 else "black")
    ax.set_title(title, fontsize=9)
    fig.colorbar(image, ax=ax, fraction=0.046, label="mean share")
    return _save(fig, path)


def top_source_accuracy(replaced: dict, title: str, path: Path) -> Path:
    """Test accuracy vs the number k of source layers kept per block, with the original and full-CLT levels."""
    plt = _pyplot()
    ks = sorted(int(k) for k in replaced["cls_top_sources"])
    fig, ax = plt.subplots(figsize=(5.5, 3.4))
    ax.plot(ks, [replaced["cls_top_sources"][str(k)] for k in ks], "o-", label="CLT, top-k sources kept")
    ax.axhline(replaced["original"], color="black", linestyle="--", label="original ViT")
    ax.axhline(replaced["cls_without_top_source"], color="#c44e52", linestyle=":", label="CLT without the top source")
    ax.set_xticks(ks)
    ax.set_xlabel("source layers kept per target layer (k)")
    ax.set_ylabel("test accuracy")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    return _save(fig, path)


def clt_frontier(points: list[dict], title: str, path: Path) -> Path:
    """R² against mean L0 per (architecture, activation), CLS and patch tokens side by side (log-scaled L0): one
    colour per activation, solid for the CLT, dashed for per-layer transcoders, dotted for per-layer SAEs."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
    activations = list(dict.fromkeys(p["activation"] for p in points))
    styles = {"clt": ("o", "-"), "transcoder": ("s", "--"), "sae": ("^", ":")}
    for ax, kind in zip(axes, ("cls", "patch")):
        for model in dict.fromkeys((p.get("architecture", "clt"), p["activation"]) for p in points):
            line = sorted((p[f"{kind}_l0"], p[f"{kind}_r2"]) for p in points
                          if (p.get("architecture", "clt"), p["activation"]) == model)
            marker, style = styles.get(model[0], ("x", "-."))
            ax.plot(*zip(*line), marker=marker, linestyle=style, color=f"C{activations.index(model[1])}",
                    label=model[1] if model[0] == "clt" else f"{model[0]} ({model[1]})")
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(_pyplot().matplotlib.ticker.ScalarFormatter())
        ax.set_xlabel("mean L0 per token and layer")
        ax.set_title(f"{kind} tokens")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("explained variance R² (test)")
    axes[0].legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    return _save(fig, path)
