"""The sanity checks' figure: per head, each method's Spearman to its trained attributions along the cascade,
and against the head trained on permuted labels."""

from __future__ import annotations

from pathlib import Path

from laya.records.sanity import STEPS, HeadSanity


def sanity_figure(results: dict[str, HeadSanity], title: str, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(4.2 * len(results) + 1.4, 3.8), squeeze=False, sharey=True)
    ticks = ["trained", *(f"−{s}" for s in STEPS), "random labels"]
    for ax, (head, r) in zip(axes[0], results.items()):
        for method, steps in r.model_randomisation.items():
            line = ax.plot(range(len(STEPS) + 1), [1.0, *(steps[s] for s in STEPS)], marker="o", label=method)[0]
            ax.plot([len(STEPS) + 1], [r.data_randomisation[method]], marker="s", color=line.get_color())
        ax.axhline(0, color="grey", linewidth=0.8)
        ax.set_xticks(range(len(ticks)), ticks, rotation=30, ha="right")
        ax.set_ylim(-1.05, 1.05)  # Spearman's whole range: a check can end below 0
        ax.set_title(f"{head} ({r.samples} test inputs)")
    axes[0][0].set_ylabel("Spearman to the trained\nhead's attribution")
    axes[0][-1].legend(fontsize=7, loc="lower left")
    fig.suptitle(f"{title}\nnear 1: unchanged by what was destroyed — the check fails", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120, format="png")
    plt.close(fig)
    return path
