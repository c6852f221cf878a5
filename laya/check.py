"""Validate a whole params.yaml at once: every section parsed by its typed config, cross-references checked.

Each stage validates its own section too; this check (stage `check`, which depends on the whole file) also
catches what no single stage reads — an unknown top-level section, an entry missing a key dvc.yaml tracks, a
`clt.backbone` that names no backbone — so `dvc repro` refuses a typo instead of saying "up to date".
"""

from __future__ import annotations

import re
from typing import Any

from laya.clt.config import CLTConfig, FrontierConfig, frontier_configs
from laya.core.config import SECTIONS, ConfigError, from_dict, section
from laya.core.device import resolve_device
from laya.core.parallel import resolve_workers
from laya.data.config import DataConfig
from laya.depth import DepthConfig
from laya.evaluate.config import EvaluateConfig
from laya.extract.config import ExtractConfig
from laya.settings import entries

DEVICE = re.compile(r"auto|cpu|cuda(:\d+)?")


def check_params(params: dict[str, Any], where: str = "params.yaml") -> list[str]:
    """Parse every section of `params` (already read by `load_params`, which refuses unknown sections);
    returns the names of the sections checked. The first problem raises ConfigError naming its key."""
    name = params.get("device", "auto")
    if not isinstance(name, str) or not DEVICE.fullmatch(name):
        raise ConfigError(f"{where}: device: expected auto, cpu, cuda or cuda:<index>, got {name!r}.")
    device = resolve_device(name)  # CUDA asked for on a machine without it: refused here, before DVC deletes outputs
    resolve_workers(params.get("workers", "auto"))
    from_dict(DataConfig, section(params, "data", where), "data")
    backbones = entries(params, where)  # each entry, with its heads and train recipe resolved
    from_dict(ExtractConfig, section(params, "extract", where), "extract").check_device(device)
    from_dict(EvaluateConfig, section(params, "evaluate", where), "evaluate")
    depth = from_dict(DepthConfig, section(params, "depth", where), "depth")
    for settings in backbones.values():
        if settings.entry.depth:
            depth.check_trained(settings.heads.names, settings.train.seeds, settings.name)
    clt = from_dict(CLTConfig, section(params, "clt", where), "clt")
    if clt.backbone not in backbones:
        raise ConfigError(f"clt.backbone: {clt.backbone!r} is not in params `backbones` {list(backbones)}; name the "
                          f"ViT the transcoder reads.")
    if backbones[clt.backbone].entry.clt_compare:
        raise ConfigError(f"backbones.{clt.backbone}.clt_compare: expected false for clt.backbone, whose own stage "
                          f"is clt; set it to false.")
    sweep = from_dict(FrontierConfig, section(params, "clt_frontier", where), "clt_frontier")
    frontier_configs(clt, sweep.activations, sweep.ks, sweep.sparsities, sweep.epochs, sweep.max_images,
                     sweep.baselines)
    return list(SECTIONS)
