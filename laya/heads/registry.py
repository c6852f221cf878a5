"""The head registry: build a head by name, save it as safetensors + config.json, load it back."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

from safetensors.torch import load_file, save_file

from laya.config import ConfigError
from laya.heads.attention import LAYA
from laya.heads.base import LayerHead
from laya.heads.linear import Concat, LastLayer
from laya.heads.scalarmix import ScalarMix
from laya.io import atomic_path, read_json

HEADS: dict[str, type[LayerHead]] = {cls.name: cls for cls in (LastLayer, Concat, ScalarMix, LAYA)}
WEIGHTS_FILE = "model.safetensors"
CONFIG_FILE = "config.json"


def build(name: str, dims: list[int], num_classes: int = 10, **params) -> LayerHead:
    """A fresh head `name` over layers of widths `dims`; `params` are its hyper-parameters (heads.<name>)."""
    if name not in HEADS:
        raise ConfigError(f"heads: unknown head {name!r}; valid: {sorted(HEADS)}.")
    cls = HEADS[name]
    valid = [p for p in inspect.signature(cls.__init__).parameters if p not in ("self", "dims", "num_classes")]
    unknown = sorted(set(params) - set(valid))
    if unknown:
        raise ConfigError(f"heads.{name}: unknown key(s) {unknown}; valid: {valid}.")
    return cls(list(dims), num_classes, **params)


def save(head: LayerHead, out_dir: str | Path, extra: dict | None = None) -> Path:
    """Write model.safetensors + config.json (the build spec plus `extra`, e.g. seed and layer names)."""
    with atomic_path(out_dir) as tmp:
        tmp.mkdir(parents=True)
        save_file({k: v.detach().cpu().contiguous() for k, v in head.state_dict().items()},
                  str(tmp / WEIGHTS_FILE))
        config = {**(extra or {}), **head.spec}
        (tmp / CONFIG_FILE).write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    return Path(out_dir)


def load(path: str | Path) -> LayerHead:
    """Rebuild a saved head from config.json and load its weights (strict, eval mode)."""
    path = Path(path)
    config = read_json(path / CONFIG_FILE, "head config")
    head = build(config["name"], config["dims"], config["num_classes"], **config["params"])
    weights = path / WEIGHTS_FILE
    if not weights.is_file():
        raise ConfigError(f"{weights}: head weights not found; rerun `dvc repro train@<backbone>`.")
    try:
        head.load_state_dict(load_file(str(weights)), strict=True)
    except Exception as err:
        raise ConfigError(f"{weights}: weights do not fit the {config['name']} head in {path / CONFIG_FILE} "
                          f"({str(err).splitlines()[0]}); rerun `dvc repro train@<backbone>`.") from None
    head.config = config
    return head.eval()
