"""An ImageFolder tree: `root/<class>/<image>`; optional `root/train/<class>` + `root/test/<class>` split.

Images are decoded with Pillow, converted to RGB or grayscale and resized to `data.image_size` (H, W); with
`image_size: null` they keep their native size, which must then be the same for every image.
Without a train/test split on disk, `data.test_fraction` of each class (seeded) becomes the test set.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, UnidentifiedImageError

from laya.core.config import ConfigError
from laya.data.raw import RawDataset

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".webp"}


def _scan(root: Path) -> tuple[list[str], list[tuple[Path, int]]]:
    classes = sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not classes:
        raise ConfigError(f"{root}: no class folders; expected root/<class_name>/<image files>.")
    items = [(f, i) for i, c in enumerate(classes) for f in sorted((root / c).rglob("*"))
             if f.suffix.lower() in IMAGE_SUFFIXES]
    if not items:
        raise ConfigError(f"{root}: class folders hold no images with suffix in {sorted(IMAGE_SUFFIXES)}.")
    return classes, items


def _native_size(path: Path) -> tuple[int, int]:
    try:
        with Image.open(path) as img:
            return img.height, img.width
    except (UnidentifiedImageError, OSError) as err:
        raise ConfigError(f"{path}: cannot decode image ({err}); remove or replace the file.") from None


def _decode(items: list[tuple[Path, int]], size: tuple[int, int], channels: int,
            native: Path | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Images as (N, H, W, C) uint8 and their labels. `native`: the image whose size `size` is (image_size: null):
    an image of another size is an error naming both, not a silent resize."""
    mode = "RGB" if channels == 3 else "L"
    images = np.empty((len(items), size[0], size[1], channels), np.uint8)
    for row, (path, _) in enumerate(items):
        try:
            with Image.open(path) as img:
                if native is not None and (img.height, img.width) != size:
                    raise ConfigError(f"{path}: {img.height}×{img.width} pixels, but {native} is {size[0]}×{size[1]} "
                                      f"and data.image_size is null (native size); set data.image_size: [H, W] to "
                                      f"resize every image.")
                img = img.convert(mode).resize((size[1], size[0]), Image.Resampling.BILINEAR)
                images[row] = np.asarray(img).reshape(size[0], size[1], channels)
        except (UnidentifiedImageError, OSError) as err:
            raise ConfigError(f"{path}: cannot decode image ({err}); remove or replace the file.") from None
    return images, np.array([label for _, label in items], np.int32)


def load_imagefolder(root: str | None, image_size: list[int] | None, channels: int, test_fraction: float,
                     seed: int) -> RawDataset:
    if not root or not Path(root).is_dir():
        raise ConfigError(f"data.root={root!r}: ImageFolder needs data.root set to an existing folder.")
    root_path = Path(root)
    if (root_path / "train").is_dir() and (root_path / "test").is_dir():
        classes, train_items = _scan(root_path / "train")
        test_classes, test_items = _scan(root_path / "test")
        if test_classes != classes:
            raise ConfigError(f"{root_path}: train/ and test/ have different class folders "
                              f"({classes} vs {test_classes}); make them the same.")
    else:
        from sklearn.model_selection import train_test_split

        classes, items = _scan(root_path)
        labels = [label for _, label in items]
        train_items, test_items = train_test_split(items, test_size=test_fraction, random_state=seed,
                                                   stratify=labels if min(np.bincount(labels)) >= 2 else None)
        train_items.sort(), test_items.sort()
    native = None if image_size else train_items[0][0]
    size = (int(image_size[0]), int(image_size[1])) if image_size else _native_size(native)
    train_images, train_labels = _decode(train_items, size, channels, native)
    test_images, test_labels = _decode(test_items, size, channels, native)
    return RawDataset("imagefolder", classes, train_images, train_labels, test_images, test_labels,
                      {"root": str(root_path), "image_size": list(size), "channels": channels})
