"""Create a frozen backbone for a prepared dataset: build, train (or probe), measure test accuracy."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

import laya
from laya.backbones.build import build_model, image_side
from laya.backbones.card import BackboneCard
from laya.backbones.config import BackboneConfig
from laya.backbones.fit import fit_backbone
from laya.data import PreparedData
from laya.images import Preprocess, accuracy


def normalisation(model: nn.Module, cfg: BackboneConfig, data: PreparedData) -> tuple[list[float], list[float]]:
    """Dataset mean/std for backbones trained here; the model's own for pretrained timm weights."""
    if not (cfg.pretrained or cfg.weights):
        return list(data.attrs["mean"]), list(data.attrs["std"])
    from timm.data import resolve_data_config

    resolved = resolve_data_config({}, model=model)
    mean, std = list(resolved["mean"]), list(resolved["std"])
    channels = len(data.attrs["mean"])
    if len(mean) != channels:  # e.g. an RGB model adapted to grayscale input: average its channel stats
        mean, std = [sum(mean) / len(mean)] * channels, [sum(std) / len(std)] * channels
    return mean, std


@dataclass(frozen=True)
class Untrained:
    """A backbone built for a prepared dataset, before training: the model and how its images are prepared."""

    model: nn.Module
    in_chans: int
    side: int  # the model's input size (images are resized to side × side)
    mean: list[float]
    std: list[float]

    @classmethod
    def build(cls, cfg: BackboneConfig, data: PreparedData, key: str) -> Untrained:
        """Build the entry's architecture for `data` (seed the torch RNG first: the weights are drawn here)."""
        in_chans = int(data.attrs["image_shape"][-1])
        side = image_side(cfg, data.attrs["image_shape"])
        model = build_model(cfg, in_chans, side, len(data.classes), key)
        mean, std = normalisation(model, cfg, data)
        return cls(model, in_chans, side, mean, std)

    def preprocess(self) -> Preprocess:
        return Preprocess(self.mean, self.std, self.side)

    def card(self, name: str, cfg: BackboneConfig, data: PreparedData, test_accuracy: float, fit: dict
             ) -> BackboneCard:
        """The trained backbone's card (weights hash unset: `save_backbone` fills it in); `fit`: the training
        loop's result (laya.backbones.fit.fit_model)."""
        return BackboneCard(
            name=name, config=cfg, in_chans=self.in_chans, img_size=self.side, num_classes=len(data.classes),
            classes=data.classes, mean=self.mean, std=self.std, data_sha256=data.attrs["data_sha256"],
            laya_version=laya.__version__, parameters=sum(p.numel() for p in self.model.parameters()),
            test_accuracy=test_accuracy, val_accuracy=fit["val_accuracy"], best_epoch=fit["best_epoch"],
            history=fit["history"])


def create_backbone(name: str, cfg: BackboneConfig, data: PreparedData, device: torch.device,
                    key: str) -> tuple[nn.Module, BackboneCard]:
    """Build and train backbone `name`; returns the frozen model (on the CPU) and its card (weights hash unset:
    `save_backbone` fills it in)."""
    torch.manual_seed(cfg.seed)
    built = Untrained.build(cfg, data, key)
    model, prep = built.model, built.preprocess()
    splits = {split: (data.images(split), data.labels(split)) for split in ("train", "val")}
    fit = fit_backbone(model, prep, splits, cfg, device, name)
    test_accuracy = accuracy(model, data.images("test"), data.labels("test"), prep.to(device), device=device)
    return model.cpu(), built.card(name, cfg, data, test_accuracy, fit)
