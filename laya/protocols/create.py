"""The backbone stage's work for every protocol: train the entry's backbone(s) and save them.

    frozen:   the backbone with its own linear classifier (laya.backbones.create_backbone)
    transfer: the same, on the pretrain classes only (ClassSubset)
    joint:    per seed, backbone + LAYA head end to end (JointModel); the head is saved as `laya_joint`
              beside its backbone (<unit>/laya_joint/) and becomes a head of the train stage
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from laya.backbones import BackboneCard, BackboneConfig, create_backbone, save_backbone
from laya.backbones.create import Untrained
from laya.core.parallel import run_jobs
from laya.data import PreparedData
from laya.extract.taps import LayerTap
from laya.heads import JOINT_HEAD, build, save
from laya.protocols.joint import JointModel, fit_joint, joint_accuracy
from laya.protocols.transfer import backbone_data
from laya.protocols.units import units
from laya.records.backbone import BackboneRecord, BackboneRun


def create_protocol(name: str, cfg: BackboneConfig, data: PreparedData, out: Path, device: torch.device,
                    key: str, workers: int = 1) -> BackboneRecord:
    """Train every unit of the entry into `out` (a new folder); returns the stage's record (the joint models'
    numbers for protocol joint). Joint models, one per seed, train in `workers` processes (laya.core.parallel)."""
    if cfg.protocol != "joint":
        model, card = create_backbone(name, cfg, backbone_data(cfg, data, key), device, key)
        save_backbone(out, model, card)
        return BackboneRecord.of(cfg, {"": BackboneRun.of(card)})
    jobs = [JointRun(name, cfg, data, unit.seeds[0], str(device), key, unit.path(out)) for unit in units(cfg, key)]
    cards = run_jobs(create_joint, jobs, workers)
    return BackboneRecord.of(cfg, {unit.name: BackboneRun.of(card) for unit, card in zip(units(cfg, key), cards)})


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


def _create_joint(name: str, cfg: BackboneConfig, data: PreparedData, seed: int, device: torch.device, key: str):
    """One joint model: backbone (its own classifier unused) → the extraction's pooling → LAYA head."""
    joint = cfg.joint_config(key)
    torch.manual_seed(seed)
    built = Untrained.build(cfg, data, key)
    backbone, prep = built.model, built.preprocess()
    with torch.no_grad():
        probe = LayerTap(backbone, joint.pooling, hook_layers=cfg.layers).pooled(
            prep(torch.from_numpy(data.images("train", 0, 2))))
    head = build(JOINT_HEAD, [int(t.shape[1]) for t in probe], len(data.classes),
                 config=joint.head_config(f"{key}.joint"))
    model = JointModel(backbone, head, joint.pooling, hook_layers=cfg.layers)
    splits = {split: (data.images(split), data.labels(split)) for split in ("train", "val")}
    fit = fit_joint(model, prep, splits, joint, seed, device, desc=f"backbone@{name} seed {seed}")
    test = joint_accuracy(model, data.images("test"), data.labels("test"), prep.to(device), device=device)
    return model.cpu(), head.cpu(), built.card(name, cfg, data, test, fit), fit
