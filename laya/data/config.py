"""params.yaml `data:` section."""

from __future__ import annotations

from dataclasses import dataclass

from laya.core.config import choice, require

DATASETS = ("fashion_mnist", "cifar10", "imagefolder")
TITLES = {"fashion_mnist": "Fashion-MNIST", "cifar10": "CIFAR-10", "imagefolder": "ImageFolder"}


def dataset_title(name: str) -> str:
    """How a prepared dataset is named in reports (its `dataset` attribute as is when unknown)."""
    return TITLES.get(name, name)


@dataclass(frozen=True)
class DataConfig:
    name: str = "fashion_mnist"  # fashion_mnist | cifar10 | imagefolder
    root: str | None = None  # folder with the raw files; null = Debian's package path, then a download
    download: bool = True  # fashion_mnist: fetch from the official location when not found locally
    val_fraction: float = 0.1  # of the official training set, stratified and seeded
    seed: int = 0  # the validation split's draw
    subset: int | None = None  # cap every split at this many samples (smoke runs); null = all
    image_size: list[int] | None = None  # [H, W] resize for cifar10/imagefolder; null = native size
    channels: int = 3  # imagefolder: 3 = RGB, 1 = grayscale
    test_fraction: float = 0.2  # imagefolder without train/ and test/ folders

    def validate(self, key: str = "data") -> None:
        choice(self.name, DATASETS, f"{key}.name")
        require(0.0 < self.val_fraction < 1.0, f"{key}.val_fraction", self.val_fraction, "a number in (0, 1)")
        require(0.0 < self.test_fraction < 1.0, f"{key}.test_fraction", self.test_fraction, "a number in (0, 1)")
        require(self.subset is None or self.subset > 0, f"{key}.subset", self.subset, "null or a positive int")
        require(self.channels in (1, 3), f"{key}.channels", self.channels, "1 or 3")
        require(self.image_size is None or (len(self.image_size) == 2 and min(self.image_size) > 0),
                f"{key}.image_size", self.image_size, "null or [height, width] with positive ints")
