"""params.yaml `backbones.<name>` entries — one backbone each, with the protocol it is trained under and what the
pipeline does with it — and each architecture's model config."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from laya.backbones.cnn import CNNConfig
from laya.backbones.intermediates import POOLINGS
from laya.backbones.mlp import MLPConfig
from laya.backbones.vit import ViTConfig
from laya.core.config import choice, from_dict, require, section

ARCHS = ("mlp", "cnn", "vit", "timm")
MODEL_CONFIGS = {"mlp": MLPConfig, "cnn": CNNConfig, "vit": ViTConfig}  # timm: keyword arguments of create_model
SCHEDULES = ("constant", "cosine")
PROTOCOLS = ("frozen", "joint", "transfer")  # see laya.protocols
ENTRY_KEYS = ("backbone", "heads", "train", "depth", "clt_compare")  # dvc.yaml reads each one as a stage param


@dataclass(frozen=True)
class BackboneConfig:
    arch: str = "mlp"  # mlp | cnn | vit (built here) | timm (any timm model by name: model.name)
    model: dict[str, Any] = field(default_factory=dict)  # the architecture's config (see MODEL_CONFIGS)
    train: bool = True  # false: keep the body frozen as loaded, fit only the linear classifier (a probe)
    pretrained: bool = False  # timm: load pretrained weights (from `weights`, else the local hub cache)
    weights: str | None = None  # timm: local weights file (pretrained_cfg_overlay=dict(file=...))
    input_size: int | None = None  # resize images to this side length before the backbone (pretrained models)
    layers: list[str] | None = None  # module names to hook; null = the model's forward_intermediates
    epochs: int = 10  # upper bound: early stopping on val accuracy
    patience: int = 2  # early stopping: epochs without a better val accuracy
    lr: float = 1.0e-3  # Adam's learning rate
    weight_decay: float = 0.0  # Adam's weight decay (L2)
    schedule: str = "constant"  # learning rate: constant | cosine (annealed to 0 over `epochs`)
    batch_size: int = 128  # training images per step
    seed: int = 0  # initialisation, data order and dropout
    protocol: str = "frozen"  # frozen | joint | transfer (laya.protocols)
    joint: dict[str, Any] = field(default_factory=dict)  # protocol joint: its recipe (JointConfig)
    pretrain_classes: list[int] | None = None  # protocol transfer: the class indices the backbone is trained on

    def validate(self, key: str) -> None:
        choice(self.arch, ARCHS, f"{key}.arch")
        choice(self.protocol, PROTOCOLS, f"{key}.protocol")
        if self.protocol == "joint":
            self.joint_config(key)
        require(self.protocol == "joint" or not self.joint, f"{key}.joint", self.joint,
                "no joint recipe unless protocol is joint (remove it, or set protocol: joint)")
        if self.protocol == "transfer":
            classes = self.pretrain_classes
            require(isinstance(classes, list) and len(classes) > 0, f"{key}.pretrain_classes", classes,
                    "a non-empty list of class indices for protocol transfer, e.g. [0, 1, 2, 3, 4]")
            require(all(isinstance(c, int) and c >= 0 for c in classes) and len(set(classes)) == len(classes),
                    f"{key}.pretrain_classes", classes, "distinct class indices ≥ 0")
        else:
            require(self.pretrain_classes is None, f"{key}.pretrain_classes", self.pretrain_classes,
                    "null unless protocol is transfer (remove it, or set protocol: transfer)")
        self.model_config(key)
        require(self.epochs >= 1, f"{key}.epochs", self.epochs, "an integer ≥ 1")
        require(self.patience >= 1, f"{key}.patience", self.patience, "an integer ≥ 1")
        require(self.lr > 0, f"{key}.lr", self.lr, "a positive learning rate")
        choice(self.schedule, SCHEDULES, f"{key}.schedule")
        require(self.batch_size >= 1, f"{key}.batch_size", self.batch_size, "an integer ≥ 1")
        require(self.input_size is None or self.input_size > 0, f"{key}.input_size", self.input_size,
                "null or a positive int")
        require(self.arch == "timm" or not (self.pretrained or self.weights), f"{key}.pretrained",
                self.pretrained, "false unless arch is timm (the built-in archs have no pretrained weights)")
        require(self.arch != "timm" or isinstance(self.model.get("name"), str), f"{key}.model.name",
                self.model.get("name"), "a timm model name, e.g. resnet18, when arch is timm")
        require(self.layers is None or len(self.layers) > 0, f"{key}.layers", self.layers,
                "null or a non-empty list of module names")

    def joint_config(self, key: str = "backbones.<name>"):
        """The joint protocol's recipe (JointConfig) from `joint`."""
        return from_dict(JointConfig, self.joint, f"{key}.joint")

    def model_config(self, key: str = "backbones.<name>"):
        """The typed config of a built-in arch (MLPConfig, CNNConfig, ViTConfig); for timm the raw kwargs."""
        if self.arch not in MODEL_CONFIGS:
            return dict(self.model)
        return from_dict(MODEL_CONFIGS[self.arch], self.model, f"{key}.model")


@dataclass(frozen=True)
class JointConfig:
    """params `backbones.<name>.joint` (protocol joint): one backbone + LAYA head trained end to end per seed."""

    seeds: list[int] = field(default_factory=lambda: [0, 1, 2, 3, 4])  # one joint model per seed; the cached
    # heads of seed k are trained on the cache of joint model k
    epochs: int = 50  # upper bound per seed
    patience: int = 5  # epochs without a better val accuracy
    lr: float = 3.0e-4  # Adam, backbone and head together
    batch_size: int = 128  # training images per step
    weight_decay: float = 0.0  # Adam's weight decay (L2)
    pooling: str = "cls"  # how the head reads token layers; must equal extract.pooling (the extract stage checks)
    head: dict = field(default_factory=dict)  # the co-trained LAYA head's config (heads.laya keys; defaults:
    # the notebook's d* = 96, ψ = identity, scorer 192, τ = 1.5)

    def validate(self, key: str = "joint") -> None:
        self.head_config(key)
        choice(self.pooling, POOLINGS, f"{key}.pooling")
        require(len(self.seeds) > 0 and len(set(self.seeds)) == len(self.seeds), f"{key}.seeds", self.seeds,
                "a non-empty list of distinct integers")
        require(self.epochs >= 1, f"{key}.epochs", self.epochs, "an integer ≥ 1")
        require(self.patience >= 1, f"{key}.patience", self.patience, "an integer ≥ 1")
        require(self.lr > 0, f"{key}.lr", self.lr, "a positive number")
        require(self.batch_size >= 1, f"{key}.batch_size", self.batch_size, "an integer ≥ 1")


    def head_config(self, key: str = "joint"):
        """The co-trained head's LAYAConfig (imported here: a stage that reads only backbones, such as clt, does
        not load the heads package)."""
        from laya.heads.attention import LAYAConfig

        return from_dict(LAYAConfig, self.head, f"{key}.head")


@dataclass(frozen=True)
class BackboneEntry:
    """params `backbones.<name>`."""

    backbone: BackboneConfig  # stage backbone@<name> (and what every other stage reads of it: its protocol)
    heads: list[str] = field(default_factory=list)  # heads trained for it besides heads.names
    train: dict[str, Any] = field(default_factory=dict)  # train keys that differ for its heads
    depth: bool = False  # stage depth@<name>: layers pruned by α, early exit guided by α (frozen caches only)
    clt_compare: bool = False  # stage clt_compare@<name>: a CLT on this ViT's cache, its CLS/patch asymmetry

    def validate(self, key: str) -> None:  # the train keys are checked where they are applied (laya.settings)
        require(self.backbone.protocol != "joint" or not self.depth, f"{key}.depth", self.depth,
                "false for protocol joint (pruning and early exit retrain heads on a frozen backbone's cache)")


def entry(params: dict[str, Any], name: str, where: str = "params.yaml") -> BackboneEntry:
    """The typed entry `backbones.<name>` (an unknown or bad key is an error naming it)."""
    key = f"backbones.{name}"
    return from_dict(BackboneEntry, section(params, key, where), key)
