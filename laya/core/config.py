"""Typed, frozen configs built from params.yaml sections; unknown keys and bad values raise ConfigError.

Every stage reads one section of params.yaml into one of these dataclasses. A typo in a key is an error that
names the key and the valid ones, never a silently ignored setting.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

SPLITS = ("train", "val", "test")  # every prepared dataset and feature store has these three
# the top-level sections of params.yaml; anything else is a typo that would otherwise be silently ignored
SECTIONS = ("device", "workers", "storage", "data", "backbones", "extract", "heads", "train", "evaluate", "depth",
            "clt", "clt_frontier")


@dataclasses.dataclass(frozen=True)
class RunConfig:
    """params.yaml's top-level keys that are not sections of a stage: where and how wide a run computes."""

    device: str = "auto"  # auto = CUDA when present, else CPU; or cpu, cuda, cuda:<index>
    workers: str | int = "auto"  # processes for a stage's independent runs, one torch thread each (the same bits
    # for any value); auto = one per core, 1 on CUDA. Not a stage param: changing it reruns nothing
    storage: dict = dataclasses.field(default_factory=dict)  # fsspec options per protocol for stores on object
    # storage, e.g. {s3: {endpoint_url: http://127.0.0.1:9000}}; never secrets (laya.storage.location)


class ConfigError(ValueError):
    """A user-facing configuration or input error: says what is wrong, what was expected, and the fix."""


def section(params: dict[str, Any], dotted: str, where: str = "params.yaml") -> dict[str, Any]:
    """Return params[a][b]... for 'a.b', with an error naming the missing key and the keys that exist."""
    node: Any = params
    walked = []
    for part in dotted.split("."):
        walked.append(part)
        if not isinstance(node, dict) or part not in node:
            have = sorted(node) if isinstance(node, dict) else []
            raise ConfigError(f"{where}: missing key '{'.'.join(walked)}'; present: {have}.")
        node = node[part]
    if node is None:
        return {}
    if not isinstance(node, dict):
        raise ConfigError(f"{where}: '{dotted}' must be a mapping, got {node!r}.")
    return node


def from_dict(cls, values: dict[str, Any] | None, key: str):
    """Build dataclass `cls` from `values`, rejecting unknown keys and checking simple types.

    `key` is the params.yaml path of the section (e.g. 'extract'), used in error messages.
    """
    values = dict(values or {})
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - set(fields))
    if unknown:
        raise ConfigError(f"{key}: unknown key(s) {unknown}; valid keys: {sorted(fields)}.")
    missing = sorted(name for name, f in fields.items() if name not in values and f.default is dataclasses.MISSING
                     and f.default_factory is dataclasses.MISSING)
    if missing:
        raise ConfigError(f"{key}: missing key(s) {missing}.")
    hints = typing.get_type_hints(cls)
    for name, value in values.items():
        values[name] = _coerce(value, hints[name], f"{key}.{name}")
    obj = cls(**values)
    validate = getattr(obj, "validate", None)
    if validate is not None:
        validate(key)
    return obj


def _coerce(value: Any, hint: Any, key: str) -> Any:
    """Check `value` against a simple type hint (int, float, str, bool, list, dict, X | None)."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        errors = []
        for arg in (a for a in args if a is not type(None)):
            try:
                return _coerce(value, arg, key)
            except ConfigError as err:
                errors.append(str(err))
        raise ConfigError(errors[0] if errors else f"{key}: got {value!r}.")
    if origin in (list, tuple):
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{key}: expected a list, got {value!r}.")
        inner = args[0] if args else Any
        return [_coerce(v, inner, key) for v in value]
    if origin is dict or hint is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{key}: expected a mapping, got {value!r}.")
        return dict(value)
    if hint is Any:
        return value
    if dataclasses.is_dataclass(hint):
        if isinstance(value, hint):
            return value
        if not isinstance(value, dict):
            raise ConfigError(f"{key}: expected a mapping, got {value!r}.")
        return from_dict(hint, value, key)
    if hint is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{key}: expected true or false, got {value!r}.")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{key}: expected an integer, got {value!r}.")
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{key}: expected a number, got {value!r}.")
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise ConfigError(f"{key}: expected a string, got {value!r}.")
        return value
    return value


def require(ok: bool, key: str, got: Any, expected: str) -> None:
    """Raise ConfigError '<key>: expected <expected>, got <got>' unless ok."""
    if not ok:
        raise ConfigError(f"{key}: expected {expected}, got {got!r}; fix it in params.yaml.")


def choice(value: str, valid: typing.Iterable[str], key: str) -> str:
    """Return value if it is one of `valid`, else raise naming the valid choices."""
    valid = list(valid)
    if value not in valid:
        raise ConfigError(f"{key}: unknown value {value!r}; valid: {valid}.")
    return value
