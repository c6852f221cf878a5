"""The depth stage's figures: accuracy vs the backbone FLOPs still computed, per pruning ranking and per exit
rule (FLOPs as a fraction of the whole backbone's forward pass)."""

from __future__ import annotations

from pathlib import Path

from laya.core.plots import _pyplot, _save
from laya.records.depth import ExitRule, PrunePoint

RANKING_STYLE = {"alpha": ("#c44e52", "mean α (LAYA)"), "scalarmix": ("#4c72b0", "ScalarMix weight"),
                 "loo": ("#55a868", "mean LOO effect")}
RULE_STYLE = {"msp": ("#4c72b0", "MSP ≥ t (BranchyNet)"), "calibrated": ("#8172b2", "P(right | MSP) ≥ t"),
              "alpha": ("#c44e52", "P(right | MSP, α) ≥ t (LAYA)")}


def pruning_figure(curves: dict[str, list[PrunePoint]], title: str, path: Path) -> Path:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.4, 3.8))
    for name, points in curves.items():
        x, y = [p.flops_fraction for p in points], [p.test_accuracy for p in points]
        color, label = RANKING_STYLE.get(name, ("#999999", None))
        if name.startswith("random"):
            label = "random order" if name == "random0" else None
        ax.plot(x, y, marker="o", color=color, label=label, alpha=0.6 if name.startswith("random") else 1,
                linestyle=":" if name.startswith("random") else "-")
        for p in points if not name.startswith("random") else []:
            ax.annotate(str(p.removed), (p.flops_fraction, p.test_accuracy), fontsize=6,
                        textcoords="offset points", xytext=(3, 3), color=color)
    ax.set_xlabel("backbone FLOPs still computed (fraction of the full forward)")
    ax.set_ylabel("test accuracy (head retrained)")
    ax.legend(fontsize=7)
    ax.set_title(title, fontsize=9)
    return _save(fig, path)


def early_exit_figure(rules: dict[str, ExitRule], full_accuracy: float, title: str, path: Path) -> Path:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.4, 3.8))
    for rule, found in rules.items():
        points = sorted(found.points, key=lambda p: p.flops_fraction)
        color, label = RULE_STYLE.get(rule, ("#999999", rule))
        ax.plot([p.flops_fraction for p in points], [p.accuracy for p in points], color=color,
                label=f"{label} — area {found.area:.4f}")
    ax.axhline(full_accuracy, color="grey", linestyle=":", linewidth=1, label="last prefix head (all layers)")
    ax.set_xlabel("mean backbone FLOPs spent per input (fraction of the full forward)")
    ax.set_ylabel("test accuracy")
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title(title, fontsize=9)
    return _save(fig, path)
