"""Safe output writing: nothing appears under its final name until it is complete.

A stage builds each output under a temporary sibling name and renames it into place at the end, so an
interrupted run never leaves a half-written file where a later stage (or `dvc commit`) would trust it, and the
user's previous output survives until the new one is whole.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from laya.core.config import ConfigError


def sha256_file(path: str | Path, block: int = 1 << 20) -> str:
    """Hex SHA-256 of a file's bytes, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(block):
            digest.update(chunk)
    return digest.hexdigest()


def sha256_bytes(data: bytes | memoryview) -> str:
    return hashlib.sha256(data).hexdigest()


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


@contextlib.contextmanager
def atomic_path(final: str | Path) -> Iterator[Path]:
    """Yield a temporary sibling path; on success move it to `final` (file or directory), else delete it.

    The previous `final` is replaced only after the new one is complete.
    """
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    if final.name.startswith(".") and final.name.endswith(f".tmp-{os.getpid()}"):  # already our temporary path
        tmp = final                                                                # (inside `staged`): no nesting
        try:
            yield tmp
        except BaseException:
            _remove(tmp)
            raise
        return
    remove_stale(final)
    tmp = final.with_name(f".{final.name}.tmp-{os.getpid()}")
    _remove(tmp)
    try:
        yield tmp
    except BaseException:
        _remove(tmp)
        raise
    replace_path(tmp, final)


@contextlib.contextmanager
def staged(*finals: str | Path) -> Iterator[tuple[Path, ...]]:
    """Build several outputs of one stage together: yields a temporary sibling path per final path and moves
    them into place only after the block has written all of them, so a failure anywhere leaves every previous
    output as it was (never new heads beside old metrics)."""
    with contextlib.ExitStack() as stack:
        yield tuple(stack.enter_context(atomic_path(final)) for final in finals)


def require_free_space(folder: str | Path, needed: int, what: str, fix: str) -> None:
    """Refuse, before long work, when the file system holding `folder` has less than `needed` bytes free."""
    folder = Path(folder)
    probe = next((p for p in (folder, *folder.parents) if p.exists()), Path("."))
    free = shutil.disk_usage(probe).free
    if free < needed:
        raise ConfigError(f"{folder}: {what} needs about {human_bytes(needed)} free, only {human_bytes(free)} "
                          f"is available there; {fix}.")


def human_bytes(n: float) -> str:
    """1536 → '1.5 KB' (binary units, up to TB)."""
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024:
            return f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale(final: Path) -> list[Path]:
    """Delete the temporary siblings (`.<name>.tmp-<pid>`, `.<name>.old-<pid>`) that a killed run of a process
    no longer alive left beside `final`; returns what was removed."""
    removed = []
    for sibling in final.parent.glob(f".{final.name}.*-*"):
        kind, _, pid = sibling.name[len(final.name) + 2:].partition("-")
        if kind in ("tmp", "old") and pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            _remove(sibling)
            removed.append(sibling)
    return removed


def replace_path(src: Path, final: Path) -> None:
    """Move `src` onto `final`; an existing `final` is moved aside first and deleted only after the move."""
    old = final.with_name(f".{final.name}.old-{os.getpid()}")
    if final.exists() or final.is_symlink():
        os.replace(final, old)
    os.replace(src, final)
    _remove(old)


def write_json(path: str | Path, payload: Any) -> None:
    """Write JSON atomically (sorted keys, indented, trailing newline) so diffs and DVC hashes are stable."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n")


def read_json(path: str | Path, what: str = "file") -> Any:
    """Read JSON with a one-line error naming the file when it is missing or malformed."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: {what} not found; run the stage that writes it (e.g. `dvc repro`).")
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise ConfigError(f"{path}: {what} is not valid JSON ({err}); delete it and rerun its stage.") from None
