"""What every stage script shares: its arguments (`--params`, `--debug`) and one line per error, never a traceback."""

from __future__ import annotations

import argparse
import errno
import os
import signal
import sys
from collections.abc import Callable

from laya.core.config import ConfigError
from laya.core.process import PEER_FAILED, collect_nothing_at_exit, exit_with_parent, peer_failed

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
