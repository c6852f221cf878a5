"""Per-layer probes: how well each layer alone decodes the class (a linear probe per layer, the `probe` head), and
how much each layer attribution agrees with that (mean Spearman per input against the probes' p_c)."""

from __future__ import annotations

from laya.report.document import Block, Table
from laya.report.inputs import ReportInputs
from laya.report.tables import depth_order, mean_std

PROBE = "probe"
AGREEMENT_METHODS = ("intrinsic", "lrp_delta", "ig", "loo")  # shown, when scored; loo = the probe's faithfulness

PROBES_TEXT = (
    "A linear probe per layer (head `probe`: one linear classifier on each cached layer alone, trained with the "
    "train stage's recipe) gives the curve of what each depth can already decode. The `probe` layer attribution is "
    "p_c of each layer's probe for the class the explained head predicts. Agreement: mean over test inputs of "
    "Spearman(the method's layer attribution, the probe attribution) — near 1, the attribution says little more "
    "than \"the layer that can already decode the class\"; agreement with `loo` is the probe attribution's own "
    "faithfulness.")


def probe_blocks(inputs: ReportInputs) -> list[Block]:
    """The per-layer probe accuracy per backbone, then the agreement of each explained head's methods."""
    curves, widest = [], 0
    for name in inputs.backbones:
        layers = inputs.train(name).layer_accuracy.get(PROBE)
        if layers:
            ordered = sorted(layers, key=depth_order)
            widest = max(widest, len(ordered))
            curves.append([name, *(f"{mean_std(layers[k])} ({k})" for k in ordered)])
    agreement = []
    for name in inputs.backbones:
        e = inputs.evaluate(name)
        for head, methods in ((e.probe_agreement or {}) if e else {}).items():
            agreement.append([name, head, *(_rho(methods.get(m)) for m in AGREEMENT_METHODS)])
    if not curves and not agreement:
        return []
    blocks: list[Block] = [PROBES_TEXT]
    if curves:
        blocks += [Table(["backbone", *(f"probe on layer {i}" for i in range(widest))],
                         [row + [""] * (widest + 1 - len(row)) for row in curves]),
                   "Test accuracy of each layer's probe, mean ± sample std over the entry's seeds."]
    if agreement:
        blocks.append(Table(["backbone", "head", *(f"agreement of {m}" for m in AGREEMENT_METHODS)], agreement))
    return blocks


def _rho(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"
