"""Fashion-MNIST from IDX files: looked up in params `data.root`, then Debian's package, then downloaded.

Debian's `dataset-fashion-mnist` recompressed the .gz files, so the published MD5s of the archives do not
match; we verify the SHA-256 and size of the *decompressed* bytes instead, which both copies share.
"""

from __future__ import annotations

import gzip
import os
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np

from laya.core.config import ConfigError
from laya.core.io import atomic_path, sha256_bytes
from laya.data.raw import RawDataset

DEBIAN_ROOT = Path("/usr/share/datasets/fashion-mnist")
DOWNLOAD_URL = "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"
CLASSES = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
           "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]  # fmt: skip

# name -> (SHA-256 of the decompressed file, its size in bytes)
FILES = {
    "train-images-idx3-ubyte": ("c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888", 47_040_016),
    "train-labels-idx1-ubyte": ("bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9", 60_008),
    "t10k-images-idx3-ubyte": ("5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b", 7_840_016),
    "t10k-labels-idx1-ubyte": ("0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34", 10_008),
}

_IDX_DTYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def parse_idx(data: bytes, name: str = "IDX data") -> np.ndarray:
    """Decode an IDX buffer: 2 zero bytes, a dtype code, the number of dims, big-endian uint32 sizes, payload."""
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] not in _IDX_DTYPES:
        raise ConfigError(f"{name}: not an IDX file (bad magic {data[:4].hex()}); expected e.g. 00000803.")
    ndim = data[3]
    header = 4 + 4 * ndim
    shape = tuple(int(s) for s in np.frombuffer(data, ">u4", count=ndim, offset=4))
    dtype = np.dtype(_IDX_DTYPES[data[2]])
    expected = header + int(np.prod(shape)) * dtype.itemsize
    if len(data) != expected:
        raise ConfigError(f"{name}: truncated or padded IDX file ({len(data)} bytes, header says {expected}).")
    return np.frombuffer(data, dtype, offset=header).reshape(shape)


def read_idx_file(path: Path) -> bytes:
    """Return the decompressed bytes of `path` (.gz or plain), with a clear error when it is corrupt."""
    try:
        raw = path.read_bytes()
        return gzip.decompress(raw) if path.suffix == ".gz" else raw
    except (OSError, EOFError, gzip.BadGzipFile) as err:
        raise ConfigError(f"{path}: cannot read ({err}); replace the file or reinstall its source.") from None


def find_file(name: str, roots: list[Path]) -> Path | None:
    for root in roots:
        for candidate in (root / name, root / f"{name}.gz"):
            if candidate.is_file():
                return candidate
    return None


def verified_bytes(name: str, path: Path, verify: bool = True) -> bytes:
    """Decompressed bytes of one Fashion-MNIST file, checked against the known size and SHA-256."""
    data = read_idx_file(path)
    want_sha, want_size = FILES[name]
    if not verify:
        return data
    if len(data) != want_size:
        failed = f"decompressed size {len(data)} bytes, expected {want_size}"
    elif (digest := sha256_bytes(data)) != want_sha:
        failed = f"size right but SHA-256 {digest[:12]}… differs from {want_sha[:12]}…"
    else:
        return data
    raise ConfigError(
        f"{path}: does not match Fashion-MNIST's {name} ({failed}); the file is corrupt or a different dataset "
        f"— delete it and reinstall `dataset-fashion-mnist` or point data.root at a good copy."
    )
    return data


def download(name: str, dest_dir: Path) -> Path:
    """Fetch `<name>.gz` from the dataset's official location into dest_dir (atomically)."""
    url = f"{DOWNLOAD_URL}{name}.gz"
    dest = dest_dir / f"{name}.gz"
    try:
        with urllib.request.urlopen(url, timeout=30) as resp, atomic_path(dest) as tmp:
            tmp.write_bytes(resp.read())
    except (urllib.error.URLError, OSError) as err:
        raise ConfigError(
            f"Fashion-MNIST file {name} not found locally and the download from {url} failed ({err}); "
            f"install Debian's `dataset-fashion-mnist` (apt-get install dataset-fashion-mnist) "
            f"or set data.root to a folder holding the IDX files."
        ) from None
    return dest


def load_fashion_mnist(root: str | None, download_dir: Path, allow_download: bool = True,
                       verify: bool = True) -> RawDataset:
    """Load and verify the four IDX files. `root` (params data.root) wins over the Debian package path."""
    roots = [Path(root)] if root else [DEBIAN_ROOT, download_dir]
    arrays, source = {}, {}
    for name in FILES:
        path = find_file(name, roots)
        if path is None and root:
            raise ConfigError(
                f"data.root={root}: no {name}[.gz] there; expected the four Fashion-MNIST IDX files "
                f"({', '.join(FILES)}), or set data.root: null to use Debian's package."
            )
        if path is None:
            if not allow_download:
                raise ConfigError(
                    f"Fashion-MNIST file {name} not found in {[str(r) for r in roots]} and data.download is "
                    f"false; run `apt-get install dataset-fashion-mnist` or set data.root."
                )
            os.makedirs(download_dir, exist_ok=True)
            path = download(name, download_dir)
        arrays[name] = parse_idx(verified_bytes(name, path, verify), str(path))
        source[name] = {"file": path.name, "sha256": FILES[name][0]}  # no absolute path: outputs are portable
    images = {split: arrays[f"{prefix}-images-idx3-ubyte"][..., None] for split, prefix in
              (("train", "train"), ("test", "t10k"))}
    labels = {split: arrays[f"{prefix}-labels-idx1-ubyte"].astype(np.int32) for split, prefix in
              (("train", "train"), ("test", "t10k"))}
    return RawDataset("fashion_mnist", CLASSES, images["train"], labels["train"], images["test"],
                      labels["test"], source)
