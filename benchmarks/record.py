"""Every benchmark's output lines, kept: `benchmarks/results/<script>.md` holds the command that printed them, the
machine's CPU model, core count and the date, then the lines as printed. The documentation's performance page
includes these files, so no benchmark figure is ever copied by hand.

    if __name__ == "__main__":
        with recorded(__file__):
            main()
"""

from __future__ import annotations

import contextlib
import datetime
import os
import platform
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def cpu_model() -> str:
    """The CPU's model name as the kernel reports it (/proc/cpuinfo), else the platform's processor string."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


class _Tee:
    def __init__(self, stream):
        self.stream, self.lines = stream, []

    def write(self, text: str) -> int:
        self.lines.append(text)
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()

    def __getattr__(self, name):
        return getattr(self.stream, name)


@contextlib.contextmanager
def recorded(script: str) -> Iterator[None]:
    """Print as usual; on success also write benchmarks/results/<script>.md (a failed run leaves the last one)."""
    tee = _Tee(sys.stdout)
    command = "python " + shlex.join([f"benchmarks/{Path(script).name}", *sys.argv[1:]])
    started = datetime.datetime.now(datetime.UTC)
    sys.stdout = tee
    try:
        yield
    finally:
        sys.stdout = tee.stream
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"{Path(script).stem}.md"
    header = (f"`{command}` — {started:%Y-%m-%d %H:%M} UTC, {cpu_model()}, {os.cpu_count()} cores, "
              f"Python {platform.python_version()}")
    tmp = out.with_suffix(".md.tmp")
    tmp.write_text(f"{header}\n\n```\n{''.join(tee.lines).rstrip()}\n```\n")
    tmp.replace(out)
