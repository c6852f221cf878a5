"""The transfer protocol: a backbone pretrained on some classes, frozen, and heads trained on the others.

The LAYA paper's frozen backbone is pretrained for another task, so its intermediate layers may carry
information its last layer discarded. Reproducible offline: the backbone trains on `pretrain_classes` of the
prepared dataset; the feature cache, every head and every metric see only the remaining classes (labels
renumbered 0..K-1 in class order), so no test class was ever seen by the backbone.
"""

from __future__ import annotations

import numpy as np

from laya.backbones.config import BackboneConfig
from laya.core.config import ConfigError
from laya.data import PreparedData


def transfer_classes(pretrain: list[int], classes: list[str], key: str) -> tuple[list[int], list[int]]:
    """(pretrain, remaining) class indices, each sorted; refuses classes not in the dataset or none left over."""
    outside = sorted(c for c in pretrain if not 0 <= c < len(classes))
    if outside:
        raise ConfigError(f"{key}.pretrain_classes: {outside} not in the dataset's {len(classes)} classes "
                          f"(indices 0–{len(classes) - 1}); fix the list in params.yaml.")
    remaining = [c for c in range(len(classes)) if c not in pretrain]
    if len(remaining) < 2 or len(pretrain) < 2:
        raise ConfigError(f"{key}.pretrain_classes: {sorted(pretrain)} leaves {len(remaining)} of "
                          f"{len(classes)} classes for the heads and {len(pretrain)} for the backbone; each side "
                          f"needs ≥ 2 classes, e.g. [0, 1, 2, 3, 4].")
    return sorted(pretrain), remaining


class ClassSubset:
    """A PreparedData restricted to `class_ids` (the same read API): labels become 0..K-1 in the order given.

    `data_sha256` stays the prepared store's (the data the rows come from); `classes` names the subset."""

    def __init__(self, data: PreparedData, class_ids: list[int]):
        self.data, self.class_ids, self.path = data, list(class_ids), data.path
        self._rows = {split: np.flatnonzero(np.isin(data.labels(split), self.class_ids))
                      for split in data.attrs["sizes"]}
        self._renumber = np.full(len(data.classes), -1, dtype=np.int64)
        self._renumber[self.class_ids] = np.arange(len(self.class_ids))
        self._images: dict[str, np.ndarray] = {}
        self.attrs = {**data.attrs, "classes": [data.classes[c] for c in self.class_ids],
                      "sizes": {split: len(rows) for split, rows in self._rows.items()},
                      "class_ids": self.class_ids}

    @property
    def classes(self) -> list[str]:
        return list(self.attrs["classes"])

    def num_samples(self, split: str) -> int:
        return len(self._rows[split])

    def rows(self, split: str) -> np.ndarray:
        """Rows of the prepared split that belong to the subset."""
        return self._rows[split]

    def images(self, split: str, start: int = 0, stop: int | None = None) -> np.ndarray:
        if split not in self._images:  # one sequential read of the split, then in-memory gathers
            self._images[split] = self.data.images(split)
        return self._images[split][self._rows[split][start:stop]]

    def labels(self, split: str, start: int = 0, stop: int | None = None) -> np.ndarray:
        original = self.data.labels(split)[self._rows[split][start:stop]]
        return self._renumber[original].astype(original.dtype)

    def index(self, split: str, start: int = 0, stop: int | None = None) -> np.ndarray:
        return self.data.index(split)[self._rows[split][start:stop]]


def head_data(cfg: BackboneConfig, data: PreparedData, key: str):
    """What the heads (and the cache) of this entry see: the remaining classes under transfer, else all."""
    if cfg.protocol != "transfer":
        return data
    return ClassSubset(data, transfer_classes(cfg.pretrain_classes, data.classes, key)[1])


def backbone_data(cfg: BackboneConfig, data: PreparedData, key: str):
    """What the backbone trains on: the pretrain classes under transfer, else all."""
    if cfg.protocol != "transfer":
        return data
    return ClassSubset(data, transfer_classes(cfg.pretrain_classes, data.classes, key)[0])
