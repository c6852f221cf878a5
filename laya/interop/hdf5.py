"""A feature store as one HDF5 file (h5py): a contiguous dataset per store array at the same path, and the
store's card as the JSON root attribute `laya`."""

from __future__ import annotations

import json
from pathlib import Path

import h5py

from laya.core.config import SPLITS, ConfigError
from laya.core.io import atomic_path
from laya.interop.layout import ArraySpec, build_store, external_card, store_arrays
from laya.storage.store import FeatureStore

CARD = "laya"  # root attribute holding the store's card (JSON)


def export_hdf5(store: FeatureStore, out: str | Path) -> Path:
    """Write every array of `store` to the HDF5 file `out`, a shard of rows at a time; returns `out`."""
    out = Path(out)
    with atomic_path(out) as tmp, h5py.File(tmp, "w") as f:
        f.attrs[CARD] = json.dumps(store.attrs)
        for spec in store_arrays(store):
            dataset = f.create_dataset(spec.path, shape=spec.shape, dtype=spec.dtype)
            array, plan = store.root[spec.path], store.shard_plan(spec.split)
            for shard in plan:
                dataset[plan.slice(shard)] = store.read(array, plan.slice(shard))
    return out


def import_hdf5(path: str | Path, out: str | Path, layers: list[str] | None = None,
                classes: list[str] | None = None, backbone: str | None = None,
                codec: str | None = None) -> FeatureStore:
    """A feature store at `out` from the HDF5 file `path` (laya's export, or any file with the same dataset
    paths: then give `layers` in depth order and `classes`)."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: no such HDF5 file; give the file convert.py export wrote.")
    try:
        f = h5py.File(path, "r")
    except OSError as err:
        raise ConfigError(f"{path}: not a readable HDF5 file ({err}); give an .h5 file.") from None
    with f:
        specs = _datasets(f)
        card = (json.loads(f.attrs[CARD]) if CARD in f.attrs
                else external_card(specs, str(path), layers, classes, backbone or path.stem))
        return build_store(out, card, specs, lambda p, rows: f[p][rows], str(path), codec)


def _datasets(f: h5py.File) -> list[ArraySpec]:
    specs: list[ArraySpec] = []

    def visit(name: str, node) -> None:
        if isinstance(node, h5py.Dataset) and name.split("/", 1)[0] in SPLITS and node.ndim >= 1:
            specs.append(ArraySpec(name, tuple(node.shape), node.dtype))

    f.visititems(visit)
    return sorted(specs, key=lambda s: (SPLITS.index(s.split), s.path))
