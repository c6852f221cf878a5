"""Every failure of a stage script is one line on stderr (a traceback only with --debug / LAYA_DEBUG=1)."""

import errno
import sys

import pytest

from laya.core.cli import run
from laya.core.config import ConfigError


def _fail(err):
    def main():
        raise err
    return main


@pytest.mark.parametrize("err, status, expected", [
    (ConfigError("train.lr: expected a number"), 2, "error: train.lr: expected a number"),
    (OSError(errno.ENOSPC, "No space left on device", "data/heads/mlp"), 1,
     "error: data/heads/mlp: no space left on device; free some space"),
    (PermissionError(errno.EACCES, "Permission denied", "reports/metrics"), 1,
     "error: reports/metrics: permission denied; make the output folder writable"),
    (RuntimeError("SafetensorError: No space left on device (os error 28)"), 1, "no space left on device"),
    (AssertionError("Input height (32) doesn't match model (224).\nmore"), 1,
     "set backbones.<name>.input_size to the model's size, or model.img_size for a timm ViT"),
    (KeyError("weird"), 1, "error: KeyError: 'weird' (unexpected; rerun with --debug or LAYA_DEBUG=1"),
])
def test_each_failure_is_one_line(capsys, monkeypatch, err, status, expected):
    monkeypatch.delenv("LAYA_DEBUG", raising=False)
    monkeypatch.setattr(sys, "argv", ["stage.py"])
    with pytest.raises(SystemExit) as exit_:
        run(_fail(err))
    assert exit_.value.code == status
    stderr = capsys.readouterr().err
    assert expected in stderr and len(stderr.strip().splitlines()) == 1, stderr


def test_debug_shows_the_traceback(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["stage.py", "--debug"])
    with pytest.raises(ValueError, match="boom"):
        run(_fail(ValueError("boom")))
    monkeypatch.setattr(sys, "argv", ["stage.py"])
    monkeypatch.setenv("LAYA_DEBUG", "1")
    with pytest.raises(ValueError, match="boom"):
        run(_fail(ValueError("boom")))


ORPHAN = """
import os, sys, time
shell = int(sys.argv[1])
while os.getppid() == shell:  # until the shell below has exited and init adopted this process
    time.sleep(0.01)
print(f"ppid {os.getppid()}", file=sys.stderr, flush=True)
from laya.core.cli import run
run(lambda: print("ran", flush=True))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
@pytest.mark.parametrize("under_dvc", [False, True])
def test_a_child_of_init_runs_unless_dvc_started_it(tmp_path, under_dvc):
    """Started by hand as init's child (setsid, a container's init) the stage runs; started by `dvc repro`, being
    init's child means dvc died before the stage began: it stops with one line instead of running as an orphan."""
    import os
    import subprocess

    from conftest import REPO

    env = {k: v for k, v in os.environ.items() if k != "DVC_STAGE"}
    if under_dvc:
        env["DVC_STAGE"] = "train@mlp"
    script = tmp_path / "orphan.py"
    script.write_text(ORPHAN)
    # the shell starts the stage in the background and exits at once: the stage is orphaned as it starts
    done = subprocess.run(["sh", "-c", f'"{sys.executable}" "{script}" $$ & exit 0'], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=60)
    if "ppid 1\n" not in done.stderr:
        pytest.skip(f"orphans are adopted by a subreaper here, not init: {done.stderr.strip()}")
    stderr = done.stderr.replace("ppid 1\n", "")
    if under_dvc:
        assert done.stdout == "" and stderr.strip() == (
            "error: stage train@mlp: `dvc repro` exited before the stage started; nothing was written, "
            "run dvc repro again"), done
    else:
        assert done.stdout == "ran\n" and stderr == "", done
