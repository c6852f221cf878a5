"""The sanity stage's record (reports/details/sanity_<name>.json): per head, how much each attribution changes
when the head's weights are re-initialised step by step, or when it is trained on permuted labels."""

from __future__ import annotations

from typing import ClassVar

from laya.core.record import Part, Record

STEPS = ("classifier", "scorer", "adapters")  # the model randomisation's cascade, output layer first


class HeadSanity(Part):
    """One head's checks on `samples` test inputs. Steps: STEPS (laya.sanity.randomise re-initialises them
    cumulatively), then random_labels; ρ: mean Spearman between the trained head's attribution and the altered
    head's."""

    samples: int
    accuracy: dict[str, float]  # {"trained" | step | "random_labels": test accuracy}
    random_labels_train_accuracy: float
    model_randomisation: dict[str, dict[str, float]]  # {method: {step: ρ}}
    data_randomisation: dict[str, float]  # {method: ρ with the permuted-label head}
    undefined: dict[str, dict[str, int]]  # {method: {step | "random_labels": inputs with an undefined ρ}}


class SanityRecord(Record):
    STAGE: ClassVar[str] = "sanity@<name>"

    seed: int  # the heads' training seed
    ablation: str  # evaluate.ablation, the methods' baseline
    heads: dict[str, HeadSanity]  # {head: its model and data randomisation}
