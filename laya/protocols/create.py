"""The backbone stage's work for every protocol: train the entry's backbone(s) and save them.

    frozen:   the backbone with its own linear classifier (laya.backbones.create_backbone)
    transfer: the same, on the pretrain classes only (ClassSubset)
    joint:    per seed, backbone + LAYA head end to end (JointModel); the head is saved as `laya_joint`
              beside its backbone (<unit>/laya_joint/) and becomes a head of the train stage
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

import laya
from laya.backbones import BackboneCard, BackboneConfig, create_backbone, save_backbone
from laya.backbones.build import build_model, image_side
from laya.backbones.create import normalisation
from laya.core.parallel import run_jobs
from laya.data import PreparedData
from laya.extract.taps import LayerTap
from laya.heads import JOINT_HEAD, build, save
from laya.images import Preprocess
from laya.protocols.joint import JointModel, fit_joint, joint_accuracy
from laya.protocols.transfer import backbone_data
from laya.protocols.units import units


def create_protocol(name: str, cfg: BackboneConfig, data: PreparedData, out: Path, device: torch.device,
                    key: str, workers: int = 1) -> list[dict]:
    """Train every unit of the entry into `out` (a new folder); returns one summary per unit (its card's
    accuracies and best epoch; the joint model's for protocol joint). Joint models, one per seed, train in
    `workers` processes (laya.core.parallel)."""
    if cfg.protocol != "joint":
        model, card = create_backbone(name, cfg, backbone_data(cfg, data, key), device, key)
        save_backbone(out, model, card)
        return [_summary("", card)]
    jobs = [JointRun(name, cfg, data, unit.seeds[0], str(device), key, unit.path(out)) for unit in units(cfg, key)]
    return [_summary(unit.name, card) for unit, card in zip(units(cfg, key), run_jobs(create_joint, jobs, workers))]


@dataclass(frozen=True)
class JointRun:
    """One joint model to train and save (a job for laya.core.parallel.run_jobs)."""

    name: str
    cfg: BackboneConfig
    data: PreparedData
    seed: int
    device: str
    key: str
    folder: Path


def create_joint(run: JointRun) -> BackboneCard:
    """Train one joint model; save its backbone (card included) and its `laya_joint` head into run.folder."""
    model, head, card, fit = _create_joint(run.name, run.cfg, run.data, run.seed, torch.device(run.device), run.key)
    save_backbone(run.folder, model.backbone, card)
    save(head, run.folder / JOINT_HEAD, backbone=run.name, seed=run.seed, layers=model.layer_names,
         layer_indices=list(range(len(model.layer_names))), test_accuracy=card.test_accuracy,
         best_epoch=fit["best_epoch"], history=fit["history"])
    print(f"backbone@{run.name} seed {run.seed}: joint model test accuracy {card.test_accuracy:.4f} "
          f"(best epoch {card.best_epoch})", flush=True)
    return card


def _summary(unit: str, card: BackboneCard) -> dict:
    return {"unit": unit, "test_accuracy": round(card.test_accuracy, 6), "val_accuracy": round(card.val_accuracy, 6),
            "best_epoch": card.best_epoch, "parameters": card.parameters}


def _create_joint(name: str, cfg: BackboneConfig, data: PreparedData, seed: int, device: torch.device, key: str):
    """One joint model: backbone (its own classifier unused) → the extraction's pooling → LAYA head."""
    joint = cfg.joint_config(key)
    torch.manual_seed(seed)
    in_chans = int(data.attrs["image_shape"][-1])
    side = image_side(cfg, data.attrs["image_shape"])
    backbone = build_model(cfg, in_chans, side, len(data.classes), key)
    mean, std = normalisation(backbone, cfg, data)
    prep = Preprocess(mean, std, side)
    with torch.no_grad():
        probe = LayerTap(backbone, joint.pooling, hook_layers=cfg.layers).pooled(
            prep(torch.from_numpy(data.images("train", 0, 2))))
    head = build(JOINT_HEAD, [int(t.shape[1]) for t in probe], len(data.classes),
                 config=joint.head_config(f"{key}.joint"))
    model = JointModel(backbone, head, joint.pooling, hook_layers=cfg.layers)
    splits = {split: (data.images(split), data.labels(split)) for split in ("train", "val")}
    fit = fit_joint(model, prep, splits, joint, seed, device, desc=f"backbone@{name} seed {seed}")
    test = joint_accuracy(model, data.images("test"), data.labels("test"), prep.to(device), device=device)
    card = BackboneCard(
        name=name, config=cfg, in_chans=in_chans, img_size=side, num_classes=len(data.classes),
        classes=data.classes, mean=mean, std=std, data_sha256=data.attrs["data_sha256"],
        laya_version=laya.__version__, parameters=sum(p.numel() for p in backbone.parameters()),
        test_accuracy=test, val_accuracy=fit["val_accuracy"], best_epoch=fit["best_epoch"], history=fit["history"])
    return model.cpu(), head.cpu(), card, fit


def protocol_details(cfg: BackboneConfig, summaries: list[dict]) -> dict:
    """The details JSON: the single backbone's numbers; for joint the means over seeds (+ std and every seed)."""
    if cfg.protocol == "frozen":
        return {k: v for k, v in summaries[0].items() if k != "unit"}
    extra = {"protocol": cfg.protocol}
    if cfg.protocol == "transfer":
        return {**{k: v for k, v in summaries[0].items() if k != "unit"}, **extra,
                "pretrain_classes": sorted(cfg.pretrain_classes)}
    acc = np.array([s["test_accuracy"] for s in summaries])
    return {"test_accuracy": round(float(acc.mean()), 6),
            "test_accuracy_std": round(float(acc.std(ddof=1)) if len(acc) > 1 else 0.0, 6),
            "val_accuracy": round(float(np.mean([s["val_accuracy"] for s in summaries])), 6),
            "best_epoch": summaries[0]["best_epoch"], "parameters": summaries[0]["parameters"], **extra,
            "seeds": {s["unit"]: {k: v for k, v in s.items() if k != "unit"} for s in summaries}}
