"""Helpers shared by the stage scripts: argument parsing, params sections, one-line errors."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from laya.config import ConfigError


def parser(doc: str) -> argparse.ArgumentParser:
    """An ArgumentParser whose help text is the stage script's docstring, with `--params`."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--params", default="params.yaml", help="params file (default: params.yaml)")
    return p


def run(main: Callable[[], None]) -> None:
    """Run a stage's main(); user errors become one line on stderr and exit status 2, never a traceback."""
    try:
        main()
    except ConfigError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print("interrupted: nothing was written under a final name; rerun to resume.", file=sys.stderr)
        sys.exit(130)


def human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"
