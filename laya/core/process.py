"""A stage process's lifecycle: stop with its parent, unwind on SIGTERM, skip exit-time garbage collection, and
the status a torchrun rank exits with when only its peer failed."""

from __future__ import annotations

import atexit
import ctypes
import gc
import os
import signal
import sys


def under_torchrun() -> bool:
    """True in a process torchrun started (it sets TORCHELASTIC_RUN_ID for every rank)."""
    return "TORCHELASTIC_RUN_ID" in os.environ


PEER_FAILED = 3  # the exit status of a rank that stopped only because another rank failed (it prints nothing)


def peer_failed(err: BaseException) -> bool:
    """True when `err` is a collective that broke because another rank went away (gloo/NCCL), not a failure of
    this rank: that rank reports the cause, so this one stays quiet."""
    text = str(err)
    return under_torchrun() and isinstance(err, RuntimeError) and any(
        marker in text for marker in ("Connection closed by peer", "Connection reset by peer", "NCCL error",
                                      "remote worker crashing"))


PR_SET_PDEATHSIG = 1  # linux/prctl.h
DVC_STAGE_ENV = "DVC_STAGE"  # set by `dvc repro` for each stage command (dvc.env.DVC_STAGE)


def _terminate(signum, _frame) -> None:
    raise SystemExit(128 + signum)  # unwinds: atomic_path deletes what was under construction


def die_with_parent() -> bool:
    """Ask Linux to send this process SIGTERM when its parent dies (prctl PR_SET_PDEATHSIG); False where that
    cannot be asked (another OS)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        return False
    return True


def exit_with_parent() -> None:
    """Stop when killed or orphaned: SIGTERM unwinds like an exception (temporary outputs are removed), and on
    Linux the kernel sends SIGTERM when the parent (e.g. a killed `dvc repro`) dies, so no stage runs on as an
    orphan. A parent that died before prctl took effect leaves the stage a child of init: that means orphaned only
    under `dvc repro` (DVC_STAGE set); a script started by hand may be init's child on purpose (a container's
    init, setsid, a detached nohup), and runs."""
    signal.signal(signal.SIGTERM, _terminate)
    if die_with_parent():
        stage = os.environ.get(DVC_STAGE_ENV)
        if stage and os.getppid() == 1:
            print(f"error: stage {stage}: `dvc repro` exited before the stage started; nothing was written, "
                  "run dvc repro again", file=sys.stderr)
            raise SystemExit(128 + signal.SIGTERM)


def collect_nothing_at_exit() -> None:
    """At interpreter exit, skip the garbage collector's passes over every object still alive (gc.freeze), which
    with torch, torch._dynamo and sklearn loaded are a visible share of a small stage's time. Only reference
    cycles alive at exit go uncollected, and the OS frees them with the process (stdout and stderr are still
    flushed; every output is written and closed before main() returns)."""
    atexit.register(gc.freeze)
