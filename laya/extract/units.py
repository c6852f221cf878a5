"""The stores of one backbone entry: one store, or one per joint seed as child groups seed<k>/ of one Zarr
hierarchy, built in <out's folder>/.partial/ so that finished seeds survive an interruption."""

from __future__ import annotations

import shutil
from pathlib import Path

import zarr

from laya.backbones import BackboneConfig, load_backbone
from laya.core.config import ConfigError
from laya.core.distributed import Ranks
from laya.core.io import staged
from laya.extract.config import ExtractConfig
from laya.extract.features import extract_features
from laya.protocols import units
from laya.storage.location import is_url
from laya.storage.store import FeatureStore


def extract_unit(name, backbone_dir: Path, data, out: str | Path, cfg: ExtractConfig, device, work_dir,
                 ranks: Ranks) -> dict:
    """The store of one frozen backbone (laya.extract.features), refused when it was trained on other data."""
    model, card = load_backbone(backbone_dir)
    if card.data_sha256 != data.attrs["data_sha256"]:
        raise ConfigError(f"{backbone_dir}: backbone was trained on other prepared data than {data.path}; "
                          f"rerun `dvc repro backbone@{name}`.")
    return extract_features(model, card, data, out, cfg, device, work_dir, ranks=ranks)


def extract_joint(name: str, bb: BackboneConfig, key: str, out: str | Path, backbone: str | Path, data,
                  cfg: ExtractConfig, device, ranks: Ranks) -> list[dict]:
    """One store per joint seed, child groups of one Zarr hierarchy; finished seeds survive an interruption in
    <out's folder>/.partial/<name>.zarr/ and are kept when their backbone and settings are unchanged."""
    if cfg.pooling != bb.joint_config(key).pooling:
        raise ConfigError(f"extract.pooling: {cfg.pooling!r}, but {key}.joint.pooling is "
                          f"{bb.joint_config(key).pooling!r} (the co-trained head read the layers that way); set "
                          f"them equal.")
    if is_url(out):
        raise ConfigError(f"--out {out}: a joint backbone's stores (one per seed) are built on a local disk; "
                          f"give a local path and share them with `dvc push` to an S3 remote.")
    out = Path(out)
    building = out.parent / ".partial" / out.name
    shards = out.parent / ".partial" / f"{out.name}.shards"  # the unit being built
    building.mkdir(parents=True, exist_ok=True)
    summaries = []
    for unit in units(bb, key):
        target, backbone_dir = unit.path(building), unit.path(backbone)
        if (target / "zarr.json").is_file() and _complete(target, backbone_dir, cfg):
            if ranks.is_main:
                print(f"extract@{name}: {unit.name} already built in {building}, kept")
            continue
        summaries.append(extract_unit(name, backbone_dir, data, target, cfg, device, shards, ranks))
    if not ranks.is_main:
        return summaries
    root = zarr.open_group(building, mode="a")
    root.attrs.update({"protocol": "joint", "units": [u.name for u in units(bb, key)]})
    with staged(out) as (tmp,):
        building.rename(tmp)
    shutil.rmtree(shards, ignore_errors=True)
    return summaries


def _complete(store_path: Path, backbone_dir: Path, cfg: ExtractConfig) -> bool:
    from laya.backbones import BackboneCard

    try:
        store = FeatureStore.open(store_path)
        store.check_built_from(BackboneCard.load(backbone_dir))
    except ConfigError:
        return False
    return store.info.extract == cfg.recorded()
