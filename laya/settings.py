"""params `backbones.<name>`: one entry per backbone with everything the pipeline does with it, and the one function
that resolves a backbone's effective settings (the global sections with the entry's own keys applied).

    backbones:
      mlp:
        backbone: {arch: mlp, model: {...}, epochs: 30}  # stage backbone@mlp: architecture, training, protocol
        heads: [laya_aligned]                            # trained for it besides heads.names
        train: {mixup: 0.4, ema: 0.999}                  # train keys that differ for its heads
        depth: true                                      # stage depth@mlp prunes and exits early by α
        clt_compare: false                               # stage clt_compare@mlp tests the CLS/patch asymmetry

Every stage <stage>@<name> reads its backbone's entry through `resolve`; the global sections (`heads`, `train`,
`depth`, `clt`, …) hold global knobs only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from laya.backbones.config import ENTRY_KEYS, BackboneConfig, BackboneEntry, entry
from laya.core.config import ConfigError, from_dict, section
from laya.train.config import HeadsConfig, TrainConfig


@dataclass(frozen=True)
class BackboneSettings:
    """A backbone's effective settings: its entry, and the heads and train recipe its stages use."""

    name: str
    entry: BackboneEntry
    heads: HeadsConfig  # heads.names + the entry's heads
    train: TrainConfig  # `train` with the entry's train keys applied

    @property
    def key(self) -> str:
        return f"backbones.{self.name}"

    @property
    def backbone(self) -> BackboneConfig:
        return self.entry.backbone

    @property
    def backbone_key(self) -> str:
        """Where the backbone's own keys live, for error messages: backbones.<name>.backbone."""
        return f"{self.key}.backbone"


def resolve(params: dict[str, Any], name: str, where: str = "params.yaml") -> BackboneSettings:
    """Backbone `name`'s entry, with `heads` and `train` resolved for it: the one place the sections meet."""
    found = entry(params, name, where)
    key = f"backbones.{name}"
    heads = HeadsConfig.parse(section(params, "heads", where)).with_extra(found.heads, f"{key}.heads")
    train = from_dict(TrainConfig, section(params, "train", where), "train").overridden(found.train, f"{key}.train")
    return BackboneSettings(name, found, heads, train)


def entries(params: dict[str, Any], where: str = "params.yaml") -> dict[str, BackboneSettings]:
    """Every backbone's settings, in params order; each entry must list every key, since dvc.yaml tracks each one
    as a stage param (DVC refuses a stage whose param is missing)."""
    backbones = section(params, "backbones", where)
    if not backbones:
        raise ConfigError(f"{where}: backbones: expected at least one backbone, e.g. mlp: {{backbone: {{arch: mlp}}, "
                          f"heads: [], train: {{}}, depth: false, clt_compare: false}}.")
    for name, values in backbones.items():
        missing = [k for k in ENTRY_KEYS if k not in (values or {})]
        if missing:
            example = BackboneEntry(backbone=BackboneConfig())  # the defaults of the keys a user may leave out
            shown = yaml.safe_dump({k: getattr(example, k) for k in missing if k != "backbone"},
                                   default_flow_style=True, sort_keys=False).strip()[1:-1]
            raise ConfigError(f"backbones.{name}: missing key(s) {missing}; every entry lists {list(ENTRY_KEYS)} "
                              f"(dvc.yaml tracks each as a stage param), e.g. {shown}.")
    return {name: resolve(params, name, where) for name in backbones}

