"""reports/report.md: the tables a reader wants first, rendered from the pipeline's metrics JSON files."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from laya.io import read_json


def _cell(stats: dict | None) -> str:
    return "—" if stats is None else f"{stats['mean']:.4f} ± {stats['std']:.4f}"


@dataclass(frozen=True)
class ReportInputs:
    """The metrics files the report reads, each named explicitly (backbone name → path, in params order)."""

    dataset: str  # shown in headings, e.g. "Fashion-MNIST"
    backbones: dict[str, Path]  # backbone@<name> metrics
    train: dict[str, Path]  # train@<name> metrics
    evaluate: dict[str, Path] = field(default_factory=dict)  # evaluate@<name> metrics (missing files: skipped)
    clt: Path | None = None
    frontier: Path | None = None


def backbone_table(inputs: ReportInputs) -> str:
    """Markdown: each frozen backbone's own test accuracy (its linear classifier)."""
    lines = ["| backbone | test accuracy | best epoch | parameters |", "|---|---|---|---|"]
    for name, path in inputs.backbones.items():
        m = read_json(path, "backbone metrics")
        lines.append(f"| {name} | {m['test_accuracy']:.4f} | {m['best_epoch']} | {m['parameters']:,} |")
    return "\n".join(lines)


def accuracy_table(inputs: ReportInputs, heads: list[str] | None = None) -> str:
    """Markdown: heads × backbones, test accuracy mean ± std over seeds, then macro-F1 means.
    Rows follow `heads` (params heads.names), then any other head found in the metrics."""
    metrics = {name: read_json(path, "train metrics") for name, path in inputs.train.items()}
    backbones = list(metrics)
    heads = list(dict.fromkeys([*(heads or []), *(h for m in metrics.values() for h in m["accuracy"])]))
    seeds = max(len(a["seeds"]) for m in metrics.values() for a in m["accuracy"].values())
    lines = [f"| head | {' | '.join(backbones)} | {' | '.join(f'macro-F1 {b}' for b in backbones)} |",
             "|---|" + "---|" * (2 * len(backbones))]
    for head in heads:
        acc = [_cell(metrics[b]["accuracy"].get(head)) for b in backbones]
        f1 = [f"{metrics[b]['macro_f1'][head]['mean']:.4f}" if head in metrics[b]["macro_f1"] else "—"
              for b in backbones]
        lines.append(f"| {head} | {' | '.join(acc)} | {' | '.join(f1)} |")
    return "\n".join(lines) + f"\n\nTest accuracy, mean ± sample std over {seeds} seeds; macro-F1 mean."


def attribution_table(inputs: ReportInputs, pairs: list[tuple[str, str]] | None = None) -> str:
    """Markdown: per (head, method) pair and backbone, faithfulness / Deletion@1 (mean ± std over seeds) and
    deletion AUC. Rows follow `pairs` (params evaluate.methods, as (method, head)), then any other pair found."""
    found = {b: read_json(path, "evaluate metrics") for b, path in inputs.evaluate.items() if Path(path).is_file()}
    if not found:
        return "(no evaluate metrics yet: run `dvc repro evaluate@<backbone>`)"
    seen = [(m, h) for e in found.values() for h, methods in e["faithfulness"].items() for m in methods]
    rows = list(dict.fromkeys([*(pairs or []), *seen]))
    lines = ["| head | method | " + " | ".join(f"{b} faithfulness | {b} Deletion@1 | {b} del. AUC" for b in found)
             + " |", "|---|---|" + "---|" * (3 * len(found))]
    for method, head in rows:
        cells = []
        for e in found.values():
            if method not in e["faithfulness"].get(head, {}):
                cells += ["—"] * 3
                continue
            undefined = e["faithfulness_undefined"][head][method]
            spread = {g: f" ± {e[f'{g}_std'][head][method]:.3f}" if f"{g}_std" in e else ""
                      for g in ("faithfulness", "deletion_at_1")}
            cells += [f"{e['faithfulness'][head][method]:.3f}{spread['faithfulness']}"
                      + (f" ({undefined} undef.)" if undefined else ""),
                      f"{e['deletion_at_1'][head][method]:.3f}{spread['deletion_at_1']}",
                      f"{e['deletion_auc'][head][method]:.4f}"]
        lines.append(f"| {head} | {method} | " + " | ".join(cells) + " |")
    heads = list(dict.fromkeys(h for e in found.values() for h in e["accuracy"]))
    depth = max(len(layers) for e in found.values() for layers in e["ablated_accuracy"].values())
    lines += ["", "Accuracy with one layer ablated (intact accuracy first):", "",
              "| backbone | head | intact | " + " | ".join(f"without layer {i}" for i in range(depth)) + " |",
              "|---|---|---|" + "---|" * depth]
    for b, e in found.items():
        for h in heads:
            if h in e["accuracy"]:
                ablated = " | ".join(f"{v:.4f} ({k})" for k, v in e["ablated_accuracy"][h].items())
                lines.append(f"| {b} | {h} | {e['accuracy'][h]:.4f} | {ablated} |")
    return "\n".join(lines)


def clt_table(path: Path | None) -> str:
    """Markdown: the `clt` stage's reconstruction per token kind and the replacement accuracies."""
    if path is None or not Path(path).is_file():
        return "(no transcoder metrics yet: run `dvc repro clt`)"
    m = read_json(path, "CLT metrics")
    lines = ["| tokens | R² | cosine | mean L0 per layer | dead features |", "|---|---|---|---|---|"]
    for kind in (k for k, v in m.items() if isinstance(v, dict) and "r2" in v):  # token positions (cls, patch)
        k = m[kind]
        lines.append(f"| {kind} | {k['r2']:.4f} | {k['cosine']:.4f} | {k['l0']:.1f} | {k['dead']} "
                     f"({k['dead_fraction']:.1%}) |")
    r = m["replacement"]
    lines += ["", "| ViT test accuracy | original | CLS replaced | patches replaced | "
              f"patches replaced from block {r['replace_from']} | CLS without each block's top source |",
              "|---|---|---|---|---|---|",
              f"| | {r['original']:.4f} | {r['cls']:.4f} | {r['patch']:.4f} | {r['patch_from_layer']:.4f} | "
              f"{r['cls_without_top_source']:.4f} ({r['cls_without_top_source'] - r['cls']:+.4f}) |".replace("-", "−"),
              "",
              "CLS replaced, keeping only the top-k source layers per block: "
              + ", ".join(f"k={k} {v:.4f}" for k, v in r["cls_top_sources"].items()) + "."]
    return "\n".join(lines)


def frontier_table(path: Path | None) -> str:
    """Markdown: the `clt_frontier` sweep, one row per activation and k or λ."""
    if path is None or not Path(path).is_file():
        return "(no frontier yet: run `dvc repro clt_frontier`)"
    m = read_json(path, "CLT frontier metrics")
    lines = ["| CLT | CLS R² | CLS cosine | CLS L0 | patch R² | patch cosine | patch L0 | ViT accuracy, CLS replaced |",
             "|---|---|---|---|---|---|---|---|"]
    for name, p in m.items():
        if isinstance(p, dict):
            lines.append(f"| {name} | {p['cls_r2']:.4f} | {p['cls_cosine']:.4f} | {p['cls_l0']:.1f} | "
                         f"{p['patch_r2']:.4f} | {p['patch_cosine']:.4f} | {p['patch_l0']:.1f} | "
                         f"{p['cls_replaced_accuracy']:.4f} |")
    return "\n".join(lines) + f"\n\nOriginal ViT test accuracy {m['original_accuracy']:.4f}."


def render(inputs: ReportInputs, heads: list[str] | None = None,
           pairs: list[tuple[str, str]] | None = None) -> str:
    return "\n".join([
        "# laya report", "",
        "Generated by `dvc repro report` from the stages' metrics files — do not edit by hand.", "",
        "## Frozen backbones", "", backbone_table(inputs), "",
        f"## Heads trained on the feature cache ({inputs.dataset} test split)", "",
        accuracy_table(inputs, heads), "",
        "## Layer attributions vs leave-one-layer-out (test split)", "",
        "Faithfulness: mean Spearman(attribution, LOO effect) across layers; Deletion@1: mean drop of the "
        "predicted class's probability when the top-ranked layer is ablated; del. AUC: area under the deletion "
        "curve (lower is better). Method `intrinsic` is the head's own layer weights (LAYA's α(x), ScalarMix's "
        "softmax(w)). Mean ± sample std over the evaluated seeds. The cost of each method (ms per explanation) "
        "is measured by the same run and kept in reports/timings/ (wall-clock, so not part of this report).", "",
        attribution_table(inputs, pairs), "",
        "## Cross-layer transcoder of the ViT's MLP blocks (test split)", "",
        "R²: explained variance of each block's MLP output, cosine: mean cosine similarity, both averaged over "
        "the blocks; L0: active features per token and block. Replacement: the ViT run with those MLP outputs "
        "taken from the CLT.", "",
        clt_table(inputs.clt), "",
        "### Reconstruction vs sparsity (`clt_frontier`)", "",
        frontier_table(inputs.frontier), "",
    ])
