"""The joint protocol's co-trained heads in the train stage: scored on their own backbone's cache like every
cache-trained head, and saved beside them (laya.protocols.joint trains them)."""

from __future__ import annotations

from pathlib import Path

from laya.backbones.card import BackboneCard
from laya.core.config import ConfigError
from laya.early_stopping import reached_cap
from laya.heads import JOINT_HEAD, head_folder, load_with_card, save
from laya.storage.store import FeatureStore
from laya.train.loop import predict


def adopt_joint_head(backbone_dir: Path, store: FeatureStore, out_dir: Path, name: str) -> tuple[int, dict]:
    """Evaluate the head co-trained with the backbone at `backbone_dir` on that backbone's cache, exactly like a
    cache-trained head, and save it into the train stage's heads folder with the cache's fingerprint.
    Returns (seed, run) in the train stage's results format."""
    head, card = load_with_card(backbone_dir / JOINT_HEAD)
    if store.layers != card.layers:
        raise ConfigError(f"{store.path}: cached layers {store.layers} differ from the {card.layers} the joint "
                          f"head read; rerun `dvc repro extract@{name}`.")
    layers = list(range(len(store.layers)))
    test = predict(head, store, "test", layers)
    recipe = BackboneCard.load(backbone_dir).config.joint_config()
    run = {"test_accuracy": test.accuracy, "macro_f1": test.macro_f1(), "best_epoch": card.best_epoch,
           "history": card.history, "capped": reached_cap(len(card.history), card.best_epoch, recipe.epochs,
                                                          recipe.patience), "seconds": 0.0}
    save(head, head_folder(out_dir, JOINT_HEAD, card.seed), backbone=name, seed=card.seed, layers=store.layers,
         layer_indices=layers, cache_fingerprint=store.fingerprint.hash,
         **{k: v for k, v in run.items() if k not in ("seconds", "capped")})
    return card.seed, run
