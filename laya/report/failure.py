"""The failure-detection table (evaluate@<name>'s `failure_detection`): does α tell when a prediction is wrong,
beside the maximum-softmax-probability baseline?"""

from __future__ import annotations

from laya.report.document import Block, Table
from laya.report.inputs import ReportInputs

DETECTORS = {"msp": "MSP", "alpha": "α", "msp_alpha": "MSP + α"}

FAILURE_TEXT = (
    "Error detection on the test split: AUROC and AUPR (errors are the positives) of the maximum softmax "
    "probability (MSP, Hendrycks & Gimpel 2017: the standard baseline, nothing fitted), of a logistic regression on "
    "the explained head's α(x) and its entropy, and of one on MSP, α and its entropy — both fitted on the val "
    "split. Mean ± sample std over the evaluated seeds; Δ = AUROC(MSP + α) − AUROC(MSP).")


def _cell(mean: float | None, std: float | None, seeds: int) -> str:
    if mean is None:
        return "—"
    return f"{mean:.4f}" if seeds == 1 else f"{mean:.4f} ± {std or 0:.4f}"


def failure_table(inputs: ReportInputs) -> list[Block]:
    rows = []
    for name in inputs.backbones:
        e = inputs.evaluate(name)
        if e is None or e.failure_detection is None:
            continue
        f, s = e.failure_detection, e.failure_detection_std
        both, msp = f.detector("msp_alpha").auroc, f.detector("msp").auroc
        gain = both - msp if both is not None and msp is not None else None
        rows.append([name, f.head, f"{f.test_errors:.0f}",
                     *(_cell(f.detector(d).auroc, s.detector(d).auroc, e.seeds) for d in DETECTORS),
                     *(_cell(f.detector(d).aupr, s.detector(d).aupr, e.seeds) for d in DETECTORS),
                     "—" if gain is None else f"{gain:+.4f}"])
    if not rows:
        return []
    return [FAILURE_TEXT,
            Table(["backbone", "head", "test errors", *(f"AUROC {v}" for v in DETECTORS.values()),
                   *(f"AUPR {v}" for v in DETECTORS.values()), "Δ AUROC"], rows)]

