"""The sanity checks' tables (stage sanity@<name>): how much each attribution changes when the head's weights
are re-initialised from the output layer down, or when it is trained on permuted labels."""

from __future__ import annotations

from laya.records.sanity import STEPS
from laya.report.document import Block, Table
from laya.report.inputs import ReportInputs

SANITY_TEXT = (
    "Mean Spearman (over the first test inputs) between a method's layer attributions on the trained head and on "
    "the same head with its weights re-initialised, cumulatively, from the output layer down (`−classifier`, then "
    "also `−scorer`, then also `−adapters`; Adebayo et al. 2018's cascading randomisation), and on a head of the "
    "same kind trained on permuted training labels. Both explain the trained head's predicted class. Near 1: the "
    "attribution does not depend on what was destroyed — it fails the check; near 0 or below: it does. LAYA's α "
    "never reads the classifier, so its `−classifier` value is 1 by construction: α says which layers the head "
    "mixes, not which layers carry the evidence for the class it outputs.")


def _cell(value: float) -> str:
    return f"{value:.3f}".replace("-", "−")


def sanity_tables(inputs: ReportInputs) -> list[Block]:
    rows, accuracy = [], []
    for name in inputs.backbones:
        found = inputs.sanity(name)
        if found is None:
            continue
        for head, r in found.heads.items():
            for method, steps in r.model_randomisation.items():
                rows.append([name, head, method, *(_cell(steps[s]) for s in STEPS),
                             _cell(r.data_randomisation[method])])
            accuracy.append([name, head, *(f"{r.accuracy[k]:.4f}" for k in ("trained", *STEPS, "random_labels")),
                             f"{r.random_labels_train_accuracy:.4f}"])
    if not rows:
        return ["(no sanity checks yet: run `dvc repro sanity@<backbone>`)"]
    return [SANITY_TEXT,
            Table(["backbone", "head", "method", *(f"−{s}" for s in STEPS), "random labels"], rows),
            "Test accuracy of the same inputs' predictions after each step (the randomisation destroys the head) and "
            "of the permuted-label head (last column: its accuracy on its own permuted training labels):",
            Table(["backbone", "head", "trained", *(f"−{s}" for s in STEPS), "random labels",
                   "random labels (train)"], accuracy)]
