"""A feature store as raw memory-mappable files (the saev layout's idea): `<path>.bin` per store array, C order, no
header, and `metadata.json` with every array's file, dtype and shape plus the store's card. Read one back with
`np.memmap(folder / a["file"], dtype=a["dtype"], mode="r", shape=tuple(a["shape"]))`."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from laya.core.config import ConfigError
from laya.core.io import atomic_path
from laya.interop.layout import ArraySpec, build_store, external_card, store_arrays
from laya.storage.store import FeatureStore

FORMAT = "laya-memmap"
VERSION = 1


def export_memmap(store: FeatureStore, out: str | Path) -> Path:
    """Write every array of `store` to the folder `out`, a shard of rows at a time; returns `out`."""
    out = Path(out)
    with atomic_path(out) as tmp:
        arrays = []
        for spec in store_arrays(store):
            file = tmp / f"{spec.path}.bin"
            file.parent.mkdir(parents=True, exist_ok=True)
            array, plan = store.root[spec.path], store.shard_plan(spec.split)
            with open(file, "wb") as fh:
                for shard in plan:
                    fh.write(np.ascontiguousarray(store.read(array, plan.slice(shard))).data)
            arrays.append({"path": spec.path, "file": f"{spec.path}.bin", "dtype": spec.dtype.str,
                           "shape": list(spec.shape)})
        metadata = {"format": FORMAT, "version": VERSION, "arrays": arrays, "card": store.attrs}
        (tmp / "metadata.json").write_text(json.dumps(metadata, indent=1) + "\n")
    return out


def import_memmap(folder: str | Path, out: str | Path, layers: list[str] | None = None,
                  classes: list[str] | None = None, backbone: str | None = None,
                  codec: str | None = None) -> FeatureStore:
    """A feature store at `out` from a memmap folder (laya's export; another tool's folder with the same
    metadata.json but no card: give `layers` in depth order and `classes`)."""
    folder = Path(folder)
    meta_path = folder / "metadata.json"
    try:
        metadata = json.loads(meta_path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"{meta_path}: missing; give the folder convert.py export wrote.") from None
    except ValueError as err:
        raise ConfigError(f"{meta_path}: not JSON ({err}); export the cache again.") from None
    if metadata.get("format") != FORMAT or metadata.get("version") != VERSION:
        raise ConfigError(f"{meta_path}: format {metadata.get('format')!r} version {metadata.get('version')!r}; "
                          f"expected {FORMAT!r} version {VERSION}.")
    arrays = {a["path"]: _open(folder, a, meta_path) for a in metadata["arrays"]}
    specs = [ArraySpec(p, tuple(a.shape), a.dtype) for p, a in arrays.items()]
    card = metadata.get("card") or external_card(specs, str(folder), layers, classes, backbone or folder.name)
    return build_store(out, card, specs, lambda p, rows: np.array(arrays[p][rows]), str(folder), codec)


def _open(folder: Path, entry: dict, meta_path: Path) -> np.memmap:
    file, dtype, shape = folder / entry["file"], np.dtype(entry["dtype"]), tuple(entry["shape"])
    if not file.resolve().is_relative_to(folder.resolve()):
        raise ConfigError(f"{meta_path}: array file {entry['file']!r} lies outside the folder; export the cache again.")
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    size = file.stat().st_size if file.is_file() else None
    if size != expected:
        raise ConfigError(f"{file}: {'missing' if size is None else f'{size} bytes'}, but {meta_path.name} says "
                          f"{dtype} {list(shape)} ({expected} bytes); export the cache again.")
    return np.memmap(file, dtype=dtype, mode="r", shape=shape) if expected else np.zeros(shape, dtype)
