"""Build a backbone from its config, and save/load frozen backbones as safetensors + config.json."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

from safetensors.torch import load_file, save_file
from torch import nn

from laya.backbones.cnn import CNNBackbone
from laya.backbones.config import BackboneConfig
from laya.backbones.mlp import MLPBackbone
from laya.config import ConfigError
from laya.io import atomic_path, read_json, sha256_file

WEIGHTS_FILE = "model.safetensors"
CONFIG_FILE = "config.json"
VIT_DEFAULTS = dict(patch_size=7, embed_dim=64, depth=6, num_heads=4, mlp_ratio=4.0)


def _call(factory, key: str, **kwargs):
    """Call `factory(**kwargs)`, turning unknown keyword arguments into a ConfigError listing valid ones."""
    params = inspect.signature(factory).parameters
    if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        unknown = sorted(set(kwargs) - set(params))
        if unknown:
            raise ConfigError(f"{key}.model: unknown key(s) {unknown}; valid: {sorted(params)}.")
    return factory(**kwargs)


def build_model(cfg: BackboneConfig, in_chans: int, img_size: int, num_classes: int, key: str) -> nn.Module:
    """Instantiate the architecture (random init, or pretrained weights for timm when asked)."""
    model_kw = dict(cfg.model)
    if cfg.arch == "mlp":
        return _call(MLPBackbone, key, in_features=in_chans * img_size * img_size, num_classes=num_classes,
                     **model_kw)
    if cfg.arch == "cnn":
        return _call(CNNBackbone, key, in_chans=in_chans, num_classes=num_classes, **model_kw)
    import timm  # imported here: it takes seconds, and the mlp/cnn stages never need it

    if cfg.arch == "vit":
        kwargs = {**VIT_DEFAULTS, **model_kw}
        return _call(timm.models.vision_transformer.VisionTransformer, key, img_size=img_size,
                     in_chans=in_chans, num_classes=num_classes, **kwargs)
    name = model_kw.pop("name")
    if name not in timm.list_models() and name.split(".")[0] not in timm.list_models():
        raise ConfigError(f"{key}.model.name: unknown timm model {name!r}; see timm.list_models() for names.")
    overlay = {"file": cfg.weights} if cfg.weights else None
    if cfg.weights and not Path(cfg.weights).is_file():
        raise ConfigError(f"{key}.weights: file {cfg.weights} not found; give a local weights file or null.")
    try:
        return timm.create_model(name, pretrained=cfg.pretrained or bool(cfg.weights), in_chans=in_chans,
                                 num_classes=num_classes, pretrained_cfg_overlay=overlay, **model_kw)
    except (RuntimeError, OSError, ValueError) as err:
        raise ConfigError(f"{key}: could not create timm model {name!r} ({str(err).splitlines()[0]}); check "
                          f"{key}.weights points to weights of this model, or set pretrained: false.") from None


def image_side(cfg: BackboneConfig, image_shape: list[int]) -> int:
    """Side length the backbone sees: `input_size` if set, else the prepared images' height."""
    return cfg.input_size or int(image_shape[0])


def save_backbone(out_dir: str | Path, model: nn.Module, meta: dict[str, Any]) -> Path:
    """Write model.safetensors + config.json into `out_dir` atomically; meta gains the weights' SHA-256."""
    with atomic_path(out_dir) as tmp:
        tmp.mkdir(parents=True)
        state = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
        save_file(state, str(tmp / WEIGHTS_FILE))
        meta = {**meta, "weights_sha256": sha256_file(tmp / WEIGHTS_FILE)}
        (tmp / CONFIG_FILE).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    return Path(out_dir)


def load_backbone(path: str | Path) -> tuple[nn.Module, dict[str, Any]]:
    """Rebuild a saved backbone from config.json and load its safetensors weights (strict, eval mode)."""
    path = Path(path)
    meta = read_json(path / CONFIG_FILE, "backbone config")
    weights = path / WEIGHTS_FILE
    if not weights.is_file():
        raise ConfigError(f"{weights}: backbone weights not found; run `dvc repro backbone@<name>`.")
    cfg = BackboneConfig(**{**meta["config"], "pretrained": False, "weights": None})
    model = build_model(cfg, meta["in_chans"], meta["img_size"], meta["num_classes"], meta["name"])
    try:
        state = load_file(str(weights))
    except Exception as err:
        raise ConfigError(f"{weights}: not a readable safetensors file ({err}); rerun its backbone stage.") from None
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as err:
        first = str(err).splitlines()[1].strip() if len(str(err).splitlines()) > 1 else str(err)
        raise ConfigError(f"{weights}: weights do not fit the {meta['config']['arch']} model in {path / CONFIG_FILE} "
                          f"({first}); rerun `dvc repro backbone@{meta['name']}`.") from None
    return model.eval().requires_grad_(False), meta
