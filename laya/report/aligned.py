"""The aligned LAYA beside plain LAYA on the same backbone: accuracy, faithfulness and Deletion@1 of α and of the
gradient methods on each head, under the ablation e was trained on and under the other one (`evaluate.
cross_ablation`), and α's faithfulness beside IG's on the same head."""

from __future__ import annotations

from laya.records.evaluate import EvaluateRecord
from laya.records.train import OverSeeds
from laya.report.document import Block, Table
from laya.report.inputs import ReportInputs
from laya.report.tables import mean_std

ALIGNED, LAYA = "laya_aligned", "laya"
ALIGNED_TEXT = (
    "`laya_aligned` is LAYA trained with one extra loss, λ·KL(softmax(e/T) ‖ α), e the head's own leave-one-layer-out "
    "effects on each batch: α is taught the metric's target, so it is also scored under the ablation it was not "
    "trained with, and in the sanity checks below. Mean ± sample std over the evaluated seeds.")


def aligned_rows(name: str, evaluation: EvaluateRecord, accuracy: dict[str, OverSeeds]) -> list[list[str]]:
    cross = evaluation.cross_ablation
    rows = []
    for head in (LAYA, ALIGNED):
        for method in evaluation.faithfulness.get(head, {}):
            if method in ("random", "loo"):
                continue
            rows.append([name, head, mean_std(accuracy.get(head)), method,
                         mean_std(evaluation.score("faithfulness", head, method), 3, evaluation.seeds),
                         mean_std(evaluation.score("deletion_at_1", head, method), 3, evaluation.seeds),
                         mean_std(cross and cross.score("faithfulness", head, method), 3, evaluation.seeds)])
    return rows


def aligned_comparison(name: str, evaluation: EvaluateRecord, accuracy: dict[str, OverSeeds]) -> str:
    """The aligned head's α beside IG on the same head, and its accuracy beside LAYA's."""
    faith = evaluation.faithfulness[ALIGNED]
    lines = []
    if "ig" in faith and "intrinsic" in faith:
        lines.append(f"faithfulness of α {faith['intrinsic']:.3f} vs IG on the same head {faith['ig']:.3f}")
    if LAYA in accuracy:
        aligned, laya = accuracy[ALIGNED].mean, accuracy[LAYA].mean
        lines.append(f"accuracy {aligned:.4f} vs LAYA {laya:.4f} ({100 * (aligned - laya):+.2f} pp)")
    return f"`{name}`: " + "; ".join(lines) + "."


def aligned_blocks(inputs: ReportInputs) -> list[Block]:
    rows, comparisons, other = [], [], None
    for name in inputs.backbones:
        evaluation = inputs.evaluate(name)
        if evaluation is None or ALIGNED not in evaluation.faithfulness:
            continue
        accuracy = inputs.train(name).accuracy
        rows += aligned_rows(name, evaluation, accuracy)
        comparisons.append(aligned_comparison(name, evaluation, accuracy))
        other = evaluation.cross_ablation.ablation if evaluation.cross_ablation is not None else other
    if not rows:
        return []
    return [ALIGNED_TEXT,
            Table(["backbone", "head", "accuracy", "method", "faithfulness", "Deletion@1",
                   f"faithfulness, {other or 'other'} ablation"], rows),
            *comparisons]
