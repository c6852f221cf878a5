"""The report's tables, each built from the stages' detail files (numbers copied, never recomputed)."""

from __future__ import annotations

import re

from laya.records.clt import SweepPoint
from laya.records.evaluate import Score
from laya.records.train import OverSeeds, TrainRecord
from laya.report.document import Block, Table
from laya.report.inputs import ReportInputs


def mean_std(stats: OverSeeds | Score | None, digits: int = 4, seeds: int | None = None) -> str:
    """'0.9014 ± 0.0007' from a number over seeds ('0.9014' from one seed: a std of one value says nothing); '—'
    when there is none. `seeds`: how many seeds a Score is over (an OverSeeds knows its own)."""
    if stats is None:
        return "—"
    count = len(stats.seeds) if isinstance(stats, OverSeeds) else seeds
    spread = "" if count == 1 else f" ± {stats.std:.{digits}f}"
    return f"{stats.mean:.{digits}f}{spread}"


def depth_order(name: str) -> tuple:
    """Sort key that puts layers in depth order: blocks.2 before blocks.10 (text order would not)."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name))


def backbone_table(inputs: ReportInputs) -> list[Block]:
    """Each frozen backbone's own test accuracy (its linear classifier)."""
    rows = []
    for name in inputs.backbones:
        m = inputs.backbone(name)
        rows.append([name, f"{m.test_accuracy:.4f}", str(m.best_epoch), f"{m.parameters:,}"])
    return [Table(["backbone", "test accuracy", "best epoch", "parameters"], rows)]


def accuracy_table(inputs: ReportInputs) -> list[Block]:
    """Heads × backbones, test accuracy mean ± std over seeds, then macro-F1 means. Rows follow params
    heads.names, then any other head found in the metrics."""
    metrics = {name: inputs.train(name) for name in inputs.backbones}
    heads = list(dict.fromkeys([*inputs.heads, *(h for m in metrics.values() for h in m.accuracy)]))
    rows = []
    for head in heads:
        acc = [accuracy_cell(m, head) for m in metrics.values()]  # one seed: no ±
        f1 = [f"{m.macro_f1[head].mean:.4f}" if head in m.macro_f1 else "—" for m in metrics.values()]
        rows.append([head, *acc, *f1])
    counts = sorted({len(a.seeds) for m in metrics.values() for a in m.accuracy.values()})
    over = (f"{counts[0]} seeds" if len(counts) == 1 else
            f"each entry's seeds ({' or '.join(map(str, counts))}; one: no ±)")
    note = f"Test accuracy, mean ± sample std over {over}; macro-F1 mean." if counts != [1] else \
        "Test accuracy of one seed; macro-F1."
    capped = [f"{b} {h} (seeds {', '.join(map(str, s))})" for b, m in metrics.items() for h, s in m.capped.items()]
    if capped:
        note += (f" {CAPPED} stopped at its epoch cap while still improving, so not a converged comparison: "
                 + "; ".join(capped) + ". Raise train.epochs (or the entry's) and rerun.")
    return [Table(["head", *metrics, *(f"macro-F1 {b}" for b in metrics)], rows), note]


CAPPED = " ‡"  # marks a head whose training stopped at its epoch cap (laya.early_stopping.reached_cap)


def accuracy_cell(record: TrainRecord, head: str) -> str:
    """A head's test accuracy over its seeds ('—' when not trained), marked CAPPED when a seed had not converged."""
    return mean_std(record.accuracy.get(head)) + (CAPPED if head in record.capped else "")


def attribution_tables(inputs: ReportInputs) -> list[Block]:
    """Per (head, method) pair and backbone: faithfulness / Deletion@1 (mean ± std over seeds) and deletion AUC;
    then the accuracy with each layer ablated. Rows follow params evaluate.methods, then any other pair found."""
    found = {b: e for b in inputs.backbones if (e := inputs.evaluate(b)) is not None}
    if not found:
        return ["(no evaluate metrics yet: run `dvc repro evaluate@<backbone>`)"]
    seen = [pair for e in found.values() for pair in e.pairs()]
    rows = []
    for method, head in dict.fromkeys([*inputs.pairs, *seen]):
        cells = []
        for e in found.values():
            faith, deletion = e.score("faithfulness", head, method), e.score("deletion_at_1", head, method)
            if faith is None:
                cells += ["—"] * 3
                continue
            undefined = e.faithfulness_undefined[head][method]
            cells += [mean_std(faith, 3, e.seeds) + (f" ({undefined} undef.)" if undefined else ""),
                      mean_std(deletion, 3, e.seeds), f"{e.deletion_auc[head][method]:.4f}"]
        rows.append([head, method, *cells])
    header = ["head", "method", *(f"{b} {col}" for b in found for col in ("faithfulness", "Deletion@1", "del. AUC"))]
    heads = list(dict.fromkeys(h for e in found.values() for h in e.accuracy))
    depth = max(len(layers) for e in found.values() for layers in e.ablated_accuracy.values())
    ablated = [[b, h, f"{e.accuracy[h]:.4f}", *(f"{e.ablated_accuracy[h][k]:.4f} ({k})"
                                                 for k in sorted(e.ablated_accuracy[h], key=depth_order))]
               for b, e in found.items() for h in heads if h in e.accuracy]
    return [Table(header, rows), "Accuracy with one layer ablated (intact accuracy first):",
            Table(["backbone", "head", "intact", *(f"without layer {i}" for i in range(depth))], ablated)]


def clt_tables(inputs: ReportInputs) -> list[Block]:
    """The `clt` stage's reconstruction per token kind and the replacement accuracies."""
    m = inputs.clt()
    if m is None:
        return ["(no transcoder metrics yet: run `dvc repro clt`)"]
    rows = [[kind, f"{k.r2:.4f}", f"{k.cosine:.4f}", f"{k.l0:.1f}", f"{k.dead} ({k.dead_fraction:.1%})"]
            for kind, k in (("cls", m.cls), ("patch", m.patch))]
    r = m.replacement
    change = f"{r.cls_without_top_source - r.cls:+.4f}".replace("-", "−")
    return [Table(["tokens", "R²", "cosine", "mean L0 per layer", "dead features"], rows),
            Table(["ViT test accuracy", "original", "CLS replaced", "patches replaced",
                   f"patches replaced from block {r.replace_from}", "CLS without each block's top source"],
                  [["", f"{r.original:.4f}", f"{r.cls:.4f}", f"{r.patch:.4f}", f"{r.patch_from_layer:.4f}",
                    f"{r.cls_without_top_source:.4f} ({change})"]]),
            "CLS replaced, keeping only the top-k source layers per block: "
            + ", ".join(f"k={k} {r.cls_top_sources[k]:.4f}" for k in sorted(r.cls_top_sources, key=depth_order)) + ".",
            *asymmetry_table(inputs)]


ASYMMETRY_TEXT = (
    "The LAYA paper's asymmetry — patch tokens diagonal-dominant, the CLS token drawing on earlier blocks — "
    "tested with each ViT's CLT: the off-diagonal share is the part of block j's reconstructed MLP output built "
    "from blocks before j (contribution shares, mean over j ≥ 1), per CLS token and per image's cached patch "
    "tokens; mean over the test images with a 95 % bootstrap interval over images. It holds when CLS − patch "
    "lies above 0.")


def asymmetry_table(inputs: ReportInputs) -> list[Block]:
    """The `clt` stage's ViT, then every clt_compare@<name>: off-diagonal share per token type."""
    found = {}
    m = inputs.clt()
    if m is not None:
        found[m.backbone] = m.asymmetry
    found.update({name: c.asymmetry for name, c in inputs.clt_compared().items()})
    if not found:
        return []
    rows = [[name, a.cls.text(), a.patch.text(), a.cls_minus_patch.text(), "yes" if a.holds else "no"]
            for name, a in found.items()]
    return [ASYMMETRY_TEXT, Table(["ViT", "CLS off-diagonal share", "patch off-diagonal share", "CLS − patch",
                                   "asymmetry holds"], rows)]


def _architecture(label: str) -> str:
    return next((a for a in ("transcoder", "sae") if label.startswith(a + "_")), "clt")


def _sweep_order(item: tuple[str, SweepPoint]) -> tuple:
    """The CLT first, then each baseline; within one, by activation and then k or λ as numbers."""
    label = item[0]
    architecture = _architecture(label)
    name = label.removeprefix(architecture + "_") if architecture != "clt" else label
    activation, _, value = name.rpartition("_k") if "_k" in name else name.rpartition("_l")
    return ("clt", "transcoder", "sae").index(architecture), activation, float(value)


FRONTIER_TEXT = (
    "Cross-layer vs per-layer, at the same dictionary size and on the same k / λ grid: the CLT (block j's MLP "
    "output from the codes of blocks ≤ j), a transcoder per block (the CLT decoder's diagonal: block j's output "
    "from its own input alone) and an SAE per block (block j's output from itself). FVU = 1 − R²; dead: features "
    "that never fire on the test tokens; dense: features firing on more than 10 % of them. ViT accuracy with its "
    "CLS MLP outputs replaced by each model's reconstruction (an SAE reconstructs the actual output, so its "
    "errors do not feed its own codes).")


def frontier_tables(inputs: ReportInputs) -> list[Block]:
    """The `clt_frontier` sweep, one row per model, activation and k or λ; FVU per layer at the shared k."""
    m = inputs.frontier()
    if m is None:
        return ["(no frontier yet: run `dvc repro clt_frontier`)"]
    points = dict(sorted(m.points.items(), key=_sweep_order))
    rows = [[name, _architecture(name), f"{p.cls_r2:.4f}", f"{p.cls_l0:.1f}", f"{p.patch_r2:.4f}", f"{p.patch_l0:.1f}",
             f"{p.patch_dead_fraction:.1%}", f"{p.patch_dense_fraction:.1%}", f"{p.cls_replaced_accuracy:.4f}"]
            for name, p in points.items()]
    blocks: list[Block] = [FRONTIER_TEXT, Table(
        ["model", "kind", "CLS R²", "CLS L0", "patch R²", "patch L0", "patch dead", "patch dense",
         "ViT accuracy, CLS replaced"], rows), f"Original ViT test accuracy {m.original_accuracy:.4f}."]
    ks = sorted(int(name.rsplit("_k", 1)[1]) for name in points if name.startswith("relu_topk_k"))
    k = ks[len(ks) // 2] if ks else None  # the middle of the grid
    shared = [name for name in (f"relu_topk_k{k}", f"transcoder_relu_topk_k{k}", f"sae_relu_topk_k{k}")
              if name in points]
    per_layer = [[name, kind, *(f"{v:.3f}" for v in getattr(points[name], f"{kind}_fvu_per_layer"))]
                 for kind in ("cls", "patch") for name in shared]
    if per_layer:
        blocks += [f"Fraction of variance unexplained per block (test tokens), ReLU-TopK models at k = {k}:",
                   Table(["model", "tokens", *(f"block {j}" for j in range(len(per_layer[0]) - 2))], per_layer)]
    return blocks
