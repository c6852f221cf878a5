"""A saved module = `model.safetensors` + a typed, frozen card (`config.json`), written and read in one place.

Every artifact that carries weights (a backbone, a head, a transcoder) is a directory with those two files. The
card says what the module is (its `kind`), how to rebuild it, where it came from, and the SHA-256 of the weights
file it was saved with; loading hashes the file it reads and refuses one that differs, so a cache or a metric can
never claim weights it was not computed from. Cards hold only what the inputs determine (no wall-clock times,
hosts or absolute paths), so rebuilding an artifact gives the same bytes.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from safetensors.torch import load_file, save_file
from torch import nn

from laya.core.config import ConfigError, from_dict
from laya.core.io import atomic_path, read_json, sha256_file

WEIGHTS_FILE = "model.safetensors"
CARD_FILE = "config.json"

C = TypeVar("C", bound="Card")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Card:
    """Base of every artifact card: `kind` names the artifact, `weights_sha256` the weights saved beside it."""

    KIND: ClassVar[str] = ""
    weights_sha256: str = ""

    @property
    def rebuild(self) -> str:
        """The command that rebuilds this artifact (used in error messages)."""
        return "dvc repro"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.KIND, **dataclasses.asdict(self)}

    @classmethod
    def from_dict(cls: type[C], data: Any, where: str) -> C:
        """Validate a card read from `where`: the right kind, known keys, the right types."""
        if not isinstance(data, dict):
            raise ConfigError(f"{where}: expected a {cls.KIND} card (a JSON object), got {type(data).__name__}.")
        kind = data.get("kind")
        if kind != cls.KIND:
            raise ConfigError(f"{where}: this is {f'a {kind} card' if kind else 'not a laya card'}, not a {cls.KIND} "
                              f"card; point to the {cls.KIND}'s folder, or rebuild it with `dvc repro`.")
        try:
            return from_dict(cls, {k: v for k, v in data.items() if k != "kind"}, cls.KIND)
        except ConfigError as err:
            raise ConfigError(f"{where}: invalid {cls.KIND} card ({err}); rebuild it with `dvc repro`.") from None

    @classmethod
    def load(cls: type[C], folder: str | Path) -> C:
        path = Path(folder) / CARD_FILE
        return cls.from_dict(read_json(path, f"{cls.KIND} card"), str(path))

    def save(self, folder: str | Path) -> None:
        (Path(folder) / CARD_FILE).write_text(json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n")


def save_module(out_dir: str | Path, module: nn.Module, card: C) -> C:
    """Write the module's state (CPU, contiguous) and its card into `out_dir` atomically; the saved card gains
    the weights file's SHA-256, and is returned."""
    with atomic_path(out_dir) as tmp:
        tmp.mkdir(parents=True)
        save_file({k: v.detach().cpu().contiguous() for k, v in module.state_dict().items()}, str(tmp / WEIGHTS_FILE))
        card = dataclasses.replace(card, weights_sha256=sha256_file(tmp / WEIGHTS_FILE))
        card.save(tmp)
    return card


def load_module(folder: str | Path, card_type: type[C], build: Callable[[C], nn.Module]) -> tuple[nn.Module, C]:
    """Read the card, check the weights file against its hash, rebuild with `build(card)` and load the weights
    strictly; returns (module in eval mode, card). Every failure is one line naming the file and the fix."""
    folder = Path(folder)
    card = card_type.load(folder)
    weights = folder / WEIGHTS_FILE
    if not weights.is_file():
        raise ConfigError(f"{weights}: {card_type.KIND} weights not found; rerun `{card.rebuild}`.")
    digest = sha256_file(weights)
    if digest != card.weights_sha256:
        raise ConfigError(f"{weights}: SHA-256 {digest[:12]}… differs from the {card.weights_sha256[:12] or '(none)'}… "
                          f"recorded in {folder / CARD_FILE}: these are not the weights the card describes; rerun "
                          f"`{card.rebuild}`.")
    module = build(card)
    try:
        state = load_file(str(weights))
    except Exception as err:
        raise ConfigError(f"{weights}: not a readable safetensors file ({err}); rerun `{card.rebuild}`.") from None
    try:
        module.load_state_dict(state, strict=True)
    except RuntimeError as err:
        lines = [line.strip() for line in str(err).splitlines() if line.strip()]
        raise ConfigError(f"{weights}: weights do not fit the {card_type.KIND} in {folder / CARD_FILE} "
                          f"({lines[1] if len(lines) > 1 else lines[0]}); rerun `{card.rebuild}`.") from None
    return module.eval(), card
