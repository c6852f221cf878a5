"""Build a backbone from its config, and save/load frozen backbones (safetensors + BackboneCard)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from torch import nn

from laya.backbones.card import BackboneCard
from laya.backbones.cnn import CNNBackbone
from laya.backbones.config import BackboneConfig
from laya.backbones.mlp import MLPBackbone
from laya.backbones.vit import build_vit
from laya.core.artifacts import load_module, save_module
from laya.core.config import ConfigError


def build_model(cfg: BackboneConfig, in_chans: int, img_size: int, num_classes: int, key: str) -> nn.Module:
    """Instantiate the architecture (random init, or pretrained weights for timm when asked)."""
    model_cfg = cfg.model_config(key)
    if cfg.arch == "mlp":
        return MLPBackbone(in_chans * img_size * img_size, num_classes, model_cfg)
    if cfg.arch == "cnn":
        return CNNBackbone(in_chans, num_classes, model_cfg)
    if cfg.arch == "vit":
        return build_vit(in_chans, img_size, num_classes, model_cfg)
    return _timm_model(cfg, in_chans, num_classes, key)


def _timm_model(cfg: BackboneConfig, in_chans: int, num_classes: int, key: str) -> nn.Module:
    import timm  # imported here: it takes seconds, and the mlp/cnn stages never need it

    kwargs = dict(cfg.model)
    name = kwargs.pop("name")
    if name not in timm.list_models() and name.split(".")[0] not in timm.list_models():
        raise ConfigError(f"{key}.model.name: unknown timm model {name!r}; see timm.list_models() for names.")
    if cfg.weights and not Path(cfg.weights).is_file():
        raise ConfigError(f"{key}.weights: file {cfg.weights} not found; give a local weights file or null.")
    overlay = {"file": cfg.weights} if cfg.weights else None
    try:
        return timm.create_model(name, pretrained=cfg.pretrained or bool(cfg.weights), in_chans=in_chans,
                                 num_classes=num_classes, pretrained_cfg_overlay=overlay, **kwargs)
    except TypeError as err:
        raise ConfigError(f"{key}.model: timm model {name!r} does not take these arguments ({err}); remove or "
                          f"rename them.") from None
    except (RuntimeError, OSError, ValueError) as err:
        raise ConfigError(f"{key}: could not create timm model {name!r} ({str(err).splitlines()[0]}); check "
                          f"{key}.weights points to weights of this model, or set pretrained: false.") from None


def image_side(cfg: BackboneConfig, image_shape: list[int]) -> int:
    """Side length the backbone sees: `input_size` if set, else the prepared images' height."""
    return cfg.input_size or int(image_shape[0])


def save_backbone(out_dir: str | Path, model: nn.Module, card: BackboneCard) -> Path:
    """Write model.safetensors + config.json (the card, with the weights' SHA-256) into `out_dir` atomically."""
    save_module(out_dir, model, card)
    return Path(out_dir)


def _rebuild(card: BackboneCard) -> nn.Module:
    cfg = replace(card.config, pretrained=False, weights=None)  # the saved weights are loaded instead
    return build_model(cfg, card.in_chans, card.img_size, card.num_classes, f"backbones.{card.name}")


def load_backbone(path: str | Path) -> tuple[nn.Module, BackboneCard]:
    """The frozen backbone saved at `path` (strict, eval mode, no gradients) and its card; weights whose hash
    differs from the card's are refused."""
    model, card = load_module(path, BackboneCard, _rebuild)
    return model.requires_grad_(False), card
