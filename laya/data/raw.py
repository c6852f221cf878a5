"""The in-memory form every dataset loader returns, before splitting."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class RawDataset:
    """Images as uint8 (N, H, W, C) and integer labels (N,), for the official train and test sets."""

    name: str
    classes: list[str]
    train_images: np.ndarray
    train_labels: np.ndarray
    test_images: np.ndarray
    test_labels: np.ndarray
    source: dict = field(default_factory=dict)  # where the files came from and their checksums

    def __post_init__(self) -> None:
        for split in ("train", "test"):
            images, labels = getattr(self, f"{split}_images"), getattr(self, f"{split}_labels")
            assert images.dtype == np.uint8 and images.ndim == 4, (split, images.dtype, images.shape)
            assert labels.ndim == 1 and len(labels) == len(images), (split, labels.shape, images.shape)
