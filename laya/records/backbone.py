"""The backbone stage's record (reports/details/backbone_<name>.json): the backbone's own accuracy; for protocol
joint the mean ± std over its seeds' joint models, each seed's numbers beside it."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from laya.core.record import Part, Record
from laya.core.seeds import mean_std

if TYPE_CHECKING:
    from laya.backbones.card import BackboneCard
    from laya.backbones.config import BackboneConfig


class BackboneRun(Part):
    """One trained backbone (a joint model's, for protocol joint): its card's numbers."""

    test_accuracy: float
    val_accuracy: float
    best_epoch: int
    parameters: int

    @classmethod
    def of(cls, card: BackboneCard) -> BackboneRun:
        return cls(test_accuracy=round(card.test_accuracy, 6), val_accuracy=round(card.val_accuracy, 6),
                   best_epoch=card.best_epoch, parameters=card.parameters)


class BackboneRecord(Record):
    """frozen: one run's numbers. transfer: the same, with the pretrain classes. joint: accuracies are means over
    the seeds (test_accuracy_std: sample std), best_epoch and parameters the first seed's, `seeds` every one."""

    STAGE: ClassVar[str] = "backbone@<name>"

    test_accuracy: float  # on the test split (of the entry's classes)
    val_accuracy: float  # on the validation split
    best_epoch: int  # the epoch whose weights were kept
    parameters: int  # trainable and frozen
    protocol: str | None = None  # absent for frozen
    pretrain_classes: list[int] | None = None  # transfer
    test_accuracy_std: float | None = None  # joint
    seeds: dict[str, BackboneRun] | None = None  # joint: {unit name: its run}

    @classmethod
    def of(cls, cfg: BackboneConfig, runs: dict[str, BackboneRun]) -> BackboneRecord:
        """`runs`: {unit name: run}, one unit unless the protocol is joint (laya.protocols.units)."""
        first = next(iter(runs.values()))
        if cfg.protocol == "frozen":
            return cls(**first.model_dump())
        if cfg.protocol == "transfer":
            return cls(**first.model_dump(), protocol=cfg.protocol, pretrain_classes=sorted(cfg.pretrain_classes))
        test, test_std = mean_std([r.test_accuracy for r in runs.values()])
        val, _ = mean_std([r.val_accuracy for r in runs.values()])
        return cls(test_accuracy=test, test_accuracy_std=test_std, val_accuracy=val, best_epoch=first.best_epoch,
                   parameters=first.parameters, protocol=cfg.protocol, seeds=runs)
