"""Every failure of a stage script is one line on stderr (a traceback only with --debug / LAYA_DEBUG=1)."""

import errno
import sys

import pytest

from laya.cli import run
from laya.config import ConfigError


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
