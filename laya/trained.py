"""The train stage's output read back: which heads and seeds a heads folder holds, and each head loaded and checked
against the store it explains (the same cache, the same layers). Every stage that reads trained heads loads them
here, so a stale or missing head is the same one-line error everywhere."""

from __future__ import annotations

import json
from pathlib import Path

from laya.core.config import ConfigError
from laya.heads import JOINT_HEAD, HeadCard, LayerHead, head_folder, load_with_card
from laya.storage.store import FeatureStore


def load_checked(heads_dir: str | Path, name: str, seed: int, store: FeatureStore, backbone: str,
                 needs: str) -> tuple[LayerHead, HeadCard]:
    """Head `name` trained with `seed` on this very store (eval mode) and its card; `needs` says which params
    must name the head and seed, for the error when it was not trained."""
    folder = head_folder(heads_dir, name, seed)
    if not (folder / "config.json").is_file():
        raise ConfigError(f"{folder}: no {name} head trained with seed {seed}; {needs} (rerun "
                          f"`dvc repro train@{backbone}`).")
    head, card = load_with_card(folder)
    if card.cache_fingerprint != store.fingerprint.hash:
        raise ConfigError(f"{folder}: trained on another cache than {store.path}; rerun `dvc repro train@{backbone}`.")
    return head, card


def load_heads(heads_dir: str | Path, names: list[str], seed: int, store: FeatureStore, backbone: str,
               needs: str = "evaluate.seeds must be a subset of train.seeds and every head in evaluate.methods "
                            "among heads.names") -> tuple[dict[str, LayerHead], dict[str, HeadCard], list[int]]:
    """The heads `names` trained with `seed`, each checked against the store, and the store layers they all read."""
    loaded = {name: load_checked(heads_dir, name, seed, store, backbone, needs) for name in names}
    indices = {tuple(card.layer_indices) for _, card in loaded.values()}
    if len(indices) > 1:
        raise ConfigError(f"{heads_dir}: the heads of seed {seed} read different layers {sorted(indices)}; "
                          f"rerun `dvc repro train@{backbone}`.")
    return ({name: head for name, (head, _) in loaded.items()}, {name: card for name, (_, card) in loaded.items()},
            list(indices.pop()))


def trained_heads(heads_dir: str | Path) -> list[str] | None:
    """The heads the train stage made in `heads_dir`: its params.json's heads.names (heads.names + heads.extra of
    this backbone) and the joint protocol's co-trained heads; None when the folder has no params.json."""
    record = Path(heads_dir) / "params.json"
    if not record.is_file():
        return None
    names = json.loads(record.read_text())["heads"]["names"]
    return names + ([JOINT_HEAD] if (Path(heads_dir) / JOINT_HEAD).is_dir() else [])


def trained_seeds(seeds: list[int], heads_dir: str | Path, head: str, candidates: list[int] | None = None
                  ) -> list[int]:
    """The seeds of `seeds` (and of `candidates`, a joint unit's) with `head` trained in `heads_dir`: the joint and
    transfer entries may train fewer seeds (train.overrides, backbones.<name>.joint.seeds)."""
    return [s for s in seeds if (candidates is None or s in candidates)
            and (head_folder(heads_dir, head, s) / "config.json").is_file()]
