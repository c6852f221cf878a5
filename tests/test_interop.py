"""Feature stores to and from HDF5 and raw memmap folders: round trips are byte-exact, other tools' files import."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest
import torch

from conftest import REPO, tiny_backbone, write_feature_store
from laya import FeatureStore
from laya.backbones import load_backbone
from laya.core.config import ConfigError
from laya.data import PreparedData
from laya.extract import ExtractConfig, extract_features
from laya.interop import export_hdf5, export_memmap, import_hdf5, import_memmap
from laya.interop.layout import store_arrays


def _tree_bytes(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def vit_store(tmp_path_factory, prepared_path) -> Path:
    """A real extracted store with every kind of array: layers, labels, index, MLP inputs/outputs, patch index."""
    tmp = tmp_path_factory.mktemp("interop")
    data = PreparedData(prepared_path)
    model, card = load_backbone(tiny_backbone(tmp / "bb", "vit", data.attrs["data_sha256"]))
    cfg = ExtractConfig(batch_size=32, shard_size=64, patch_tokens=3, mlp_io=True)
    extract_features(model, card, data, tmp / "vit.zarr", cfg, torch.device("cpu"))
    return tmp / "vit.zarr"


def test_tensorstore_reads_every_array_as_laya_does(vit_store):
    """The store is standard Zarr v3 (sharding, blosc): Google's tensorstore, another implementation, agrees."""
    import tensorstore

    store = FeatureStore.open(vit_store)
    specs = store_arrays(store)
    assert {s.path.split("/", 1)[1] for s in specs} >= {"labels", "index", "mlp_in_patch", "patch_index"}
    for spec in specs:
        array = tensorstore.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(vit_store / spec.path)}},
                                 read=True).result()
        assert array.shape == spec.shape and np.dtype(array.dtype.numpy_dtype) == spec.dtype, spec.path
        assert np.array_equal(array.read().result(), store.root[spec.path][:]), spec.path


@pytest.mark.parametrize("codec", ["lz4", "zstd", "none"])
def test_the_read_path_decodes_with_zarrs_and_agrees_with_zarr_python(tmp_path, vit_store, codec):
    """FeatureStore reads through zarrs (laya.storage.zarrio.read_fast); every array reads back as zarr-python reads it,
    whatever the codec, and reading leaves the store's bytes as written."""
    import zarr
    from zarrs import ZarrsCodecPipeline

    path = vit_store
    if codec != FeatureStore.open(vit_store).info.extract["codec"]:  # rebuild the extracted store with this codec
        path = tmp_path / "re.zarr"
        import_hdf5(export_hdf5(FeatureStore.open(vit_store), tmp_path / "vit.h5"), path, codec=codec)
    before = _tree_bytes(path)
    store, plain = FeatureStore.open(path), zarr.open_group(path, mode="r")
    for spec in store_arrays(store):
        split, name = spec.path.split("/", 1)
        array = store.array(split, name)
        assert isinstance(array.async_array.codec_pipeline, ZarrsCodecPipeline) and \
            array.async_array.codec_pipeline.impl is not None, spec.path
        assert np.array_equal(array[:], plain[spec.path][:]), spec.path
        assert np.array_equal(array[3:17], plain[spec.path][3:17]), spec.path  # a selection inside a shard
    assert _tree_bytes(path) == before


@pytest.mark.parametrize("layout", ["hdf5", "memmap"])
def test_export_then_import_rebuilds_the_store_byte_for_byte(tmp_path, vit_store, layout):
    store = FeatureStore.open(vit_store)
    exported = tmp_path / ("vit.h5" if layout == "hdf5" else "vit_memmap")
    (export_hdf5 if layout == "hdf5" else export_memmap)(store, exported)
    back = (import_hdf5 if layout == "hdf5" else import_memmap)(exported, tmp_path / "back.zarr")
    assert _tree_bytes(tmp_path / "back.zarr") == _tree_bytes(vit_store)
    assert back.fingerprint == store.fingerprint and back.info.mlp_io


def test_exported_files_hold_the_values_where_other_tools_look(tmp_path, vit_store):
    store = FeatureStore.open(vit_store)
    export_hdf5(store, tmp_path / "vit.h5")
    export_memmap(store, tmp_path / "mm")
    meta = json.loads((tmp_path / "mm" / "metadata.json").read_text())
    entries = {a["path"]: a for a in meta["arrays"]}
    with h5py.File(tmp_path / "vit.h5", "r") as f:
        assert json.loads(f.attrs["laya"])["layers"] == store.layers
        for path in ("train/layers/blocks.1", "test/labels", "val/mlp_out_patch", "train/patch_index"):
            split, name = path.split("/", 1)
            want = store.array(split, name)[:]
            assert np.array_equal(f[path][:], want), path
            entry = entries[path]
            raw = np.memmap(tmp_path / "mm" / entry["file"], dtype=entry["dtype"], mode="r",
                            shape=tuple(entry["shape"]))
            assert np.array_equal(raw, want), path


def test_a_file_from_another_tool_imports_with_layer_order_and_classes(tmp_path):
    rng = np.random.default_rng(0)
    sizes = {"train": 70, "val": 20, "test": 30}
    with h5py.File(tmp_path / "theirs.h5", "w") as f:  # 'blocks.10' sorts before 'blocks.2': order must be given
        for split, n in sizes.items():
            for name, d in (("blocks.2", 5), ("blocks.10", 3)):
                f[f"{split}/layers/{name}"] = rng.normal(size=(n, d)).astype(np.float32)
            f[f"{split}/labels"] = rng.integers(0, 2, n).astype(np.int64)
        f["notes/readme"] = np.zeros(3)  # not under a split: ignored
    with pytest.raises(ConfigError, match="pass the layer names in depth order"):
        import_hdf5(tmp_path / "theirs.h5", tmp_path / "no.zarr")
    assert not (tmp_path / "no.zarr").exists()
    store = import_hdf5(tmp_path / "theirs.h5", tmp_path / "mine.zarr", layers=["blocks.2", "blocks.10"],
                        classes=["a", "b"])
    assert store.layers == ["blocks.2", "blocks.10"] and store.dims == [5, 3] and store.info.backbone == "theirs"
    assert store.fingerprint.backbone_sha256 == "imported"
    with h5py.File(tmp_path / "theirs.h5", "r") as f:
        feats, labels = next(store.batches("val", 20, layers=[1]))
        assert np.array_equal(feats[0].numpy(), f["val/layers/blocks.10"][:])
        assert np.array_equal(labels.numpy(), f["val/labels"][:])


def test_bad_sources_are_refused_in_one_line_and_write_nothing(tmp_path):
    write_feature_store(tmp_path / "toy.zarr")
    export_memmap(FeatureStore.open(tmp_path / "toy.zarr"), tmp_path / "mm")
    meta_path = tmp_path / "mm" / "metadata.json"
    meta = json.loads(meta_path.read_text())
    cut = tmp_path / "mm" / meta["arrays"][0]["file"]
    cut.write_bytes(cut.read_bytes()[:-2])
    with pytest.raises(ConfigError, match=r"bytes, but metadata.json says"):
        import_memmap(tmp_path / "mm", tmp_path / "a.zarr")
    meta["arrays"][0]["file"] = "../../etc/passwd"
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(ConfigError, match="outside the folder"):
        import_memmap(tmp_path / "mm", tmp_path / "a.zarr")
    (tmp_path / "junk.h5").write_text("not hdf5")
    with pytest.raises(ConfigError, match="not a readable HDF5 file"):
        import_hdf5(tmp_path / "junk.h5", tmp_path / "a.zarr")
    with pytest.raises(ConfigError, match="missing; give the folder"):
        import_memmap(tmp_path / "nothing", tmp_path / "a.zarr")
    assert not (tmp_path / "a.zarr").exists()


def test_convert_command_round_trips_and_refuses_to_overwrite(tmp_path):
    write_feature_store(tmp_path / "toy.zarr")
    convert = [sys.executable, str(REPO / "pipeline" / "convert.py")]
    subprocess.run([*convert, "export", str(tmp_path / "toy.zarr"), str(tmp_path / "toy.h5")], check=True, cwd=tmp_path)
    done = subprocess.run([*convert, "import", str(tmp_path / "toy.h5"), str(tmp_path / "copy.zarr")],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert _tree_bytes(tmp_path / "copy.zarr") == _tree_bytes(tmp_path / "toy.zarr")
    again = subprocess.run([*convert, "import", str(tmp_path / "toy.h5"), str(tmp_path / "copy.zarr")],
                           capture_output=True, text=True, cwd=tmp_path)
    assert again.returncode != 0 and "already exists" in again.stderr and "Traceback" not in again.stderr
