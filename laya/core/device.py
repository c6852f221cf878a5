"""`device: auto|cpu|cuda[:i]` → torch.device, with a clear error when CUDA is asked for but absent."""

from __future__ import annotations

from typing import Any

import torch

from laya.core.config import ConfigError


def resolve_device(name: str = "auto") -> torch.device:
    if not isinstance(name, str):
        raise ConfigError(f"device: expected auto, cpu, cuda or cuda:<index>, got {name!r}; fix it in params.yaml.")
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(f"device: {name!r} requested but CUDA is not available; use device: auto or cpu.")
    try:
        device = torch.device(name)
    except RuntimeError:
        raise ConfigError(f"device: unknown device {name!r}; valid: auto, cpu, cuda, cuda:<index>.") from None
    count = torch.cuda.device_count() if device.type == "cuda" else 0
    if device.index is not None and device.type == "cuda" and device.index >= count:
        raise ConfigError(f"device: {name!r} requested but this machine has {count} CUDA device(s), cuda:0 to "
                          f"cuda:{count - 1}; use one of them or device: cuda.")
    return device


def device_from_params(params: dict[str, Any]) -> torch.device:
    """The device params.yaml asks for (top-level `device`, default auto)."""
    return resolve_device(params.get("device", "auto"))
