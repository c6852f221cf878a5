"""Helpers shared by the stage scripts: argument parsing, params sections, one-line errors."""

from __future__ import annotations

import argparse
import atexit
import ctypes
import errno
import gc
import os
import signal
import sys
from collections.abc import Callable

from laya.config import ConfigError

DEBUG_ENV = "LAYA_DEBUG"  # set to 1 (or pass --debug) for the full traceback of an unexpected error


def parser(doc: str) -> argparse.ArgumentParser:
    """An ArgumentParser whose help text is the stage script's docstring, with `--params` and `--debug`."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--params", default="params.yaml", help="params file (default: params.yaml)")
    p.add_argument("--debug", action="store_true", help=f"show full tracebacks (or set {DEBUG_ENV}=1)")
    return p


def explain(err: BaseException) -> str:
    """One line for a failure laya did not raise itself: what happened, where, and the fix."""
    where = f"{err.filename}: " if isinstance(err, OSError) and err.filename else ""
    if isinstance(err, OSError) and err.errno == errno.ENOSPC:
        return f"{where}no space left on device; free some space (`df -h .`) and rerun the stage."
    if isinstance(err, PermissionError) or (isinstance(err, OSError) and err.errno in (errno.EACCES, errno.EROFS)):
        return f"{where}permission denied; make the output folder writable (e.g. `chmod -R u+w`) and rerun."
    if isinstance(err, MemoryError):
        return "out of memory; lower the batch size (e.g. train.batch_size, evaluate.batch_size) or train.memory_mb."
    if "No space left on device" in str(err):
        return f"no space left on device ({str(err).splitlines()[0]}); free some space (`df -h .`) and rerun."
    first = str(err).strip().splitlines()[0] if str(err).strip() else ""
    if "doesn't match model" in first:  # timm's patch embedding: images of another size than the model's
        return (f"the backbone gets images of another size than it was built for ({first}); set "
                f"backbones.<name>.input_size to the model's size, or model.img_size for a timm ViT.")
    return f"{type(err).__name__}: {first} (unexpected; rerun with --debug or {DEBUG_ENV}=1 for the traceback)"


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
    """At interpreter exit, skip the garbage collector's passes over every object still alive (gc.freeze): with
    torch, torch._dynamo and sklearn loaded they cost 1–2 s per process, a tenth of a small stage's wall time.
    Only reference cycles alive at exit go uncollected, and the OS frees them with the process (stdout and stderr
    are still flushed; every output is written and closed before main() returns)."""
    atexit.register(gc.freeze)


def run(main: Callable[[], None]) -> None:
    """Run a stage's main(); every error becomes one line on stderr (exit status 2 for bad input, 1 otherwise),
    never a traceback — unless --debug or LAYA_DEBUG=1 asks for it. The stage exits when its parent dies."""
    debug = "--debug" in sys.argv[1:] or os.environ.get(DEBUG_ENV, "") not in ("", "0")
    exit_with_parent()
    collect_nothing_at_exit()
    try:
        _report_errors(main, debug)
    finally:
        # main() is over, nothing is left to unwind: a SIGTERM now (e.g. torchrun's agent stopping a rank that
        # is already exiting) ends the process quietly instead of raising inside an exit-time finaliser
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _report_errors(main: Callable[[], None], debug: bool) -> None:
    try:
        main()
    except ConfigError as err:
        if debug:
            raise
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        if os.environ.get("RANK", "0") == "0":  # Ctrl-C reaches every rank of a torchrun job: one line for all
            print("interrupted: nothing was written under a final name; rerun to resume.", file=sys.stderr)
        sys.exit(130)
    except Exception as err:  # noqa: BLE001 — the last line of defence: one line, never a traceback
        if debug:
            raise
        if peer_failed(err):  # under torchrun: the rank that failed first has said why
            sys.exit(PEER_FAILED)
        print(f"error: {explain(err)}", file=sys.stderr)
        sys.exit(1)
