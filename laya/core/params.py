"""Read params.yaml: a YAML mapping of the known sections, whose `storage` options configure fsspec."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from laya.core.config import SECTIONS, ConfigError
from laya.storage.location import configure_storage


def load_params(path: str | Path) -> dict[str, Any]:
    """Read params.yaml (or any YAML mapping) with a clear error when it is missing or malformed; its `storage`
    section (fsspec options per protocol, laya.storage.location) becomes this process's fsspec defaults."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: params file not found; expected a YAML file (run from the repo root).")
    try:
        params = yaml.safe_load(path.read_text())
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not valid YAML ({err}); fix the syntax.") from None
    if not isinstance(params, dict):
        raise ConfigError(f"{path}: expected a mapping of sections at top level, got {type(params).__name__}.")
    unknown = sorted(set(params) - set(SECTIONS))
    if unknown:
        raise ConfigError(f"{path}: unknown top-level section(s) {unknown}; valid: {list(SECTIONS)} (a typo? "
                          f"rename or remove it).")
    configure_storage(params)
    return params
