"""Extraction with several torchrun ranks (gloo on CPU): the same store as one process, resumable after a rank
is killed, and one clear line for what cannot work."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
import torch
import yaml

from conftest import extract_command, vit_extraction_inputs
from laya.backbones import load_backbone
from laya.data import PreparedData
from laya.extract import ExtractConfig, extract_features

EXTRACT = {"batch_size": 4, "shard_size": 32, "patch_tokens": 3, "mlp_io": True}


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """Prepared data (12 shards of 32: 9 train, 1 val, 2 test), a tiny ViT, and the one-process store."""
    tmp = tmp_path_factory.mktemp("dist")
    data_path, backbone = vit_extraction_inputs(tmp, n_train=300)
    data = PreparedData(data_path)
    model, card = load_backbone(backbone)
    single = tmp / "single" / "vit.zarr"
    extract_features(model, card, data, single, ExtractConfig(**EXTRACT), torch.device("cpu"))
    return tmp, data_path, backbone, single


def _command(tmp: Path, data_path: Path, backbone: Path, out: Path, **extract) -> list[str]:
    return extract_command(out.parent / "params.yaml", data_path, backbone, out, {**EXTRACT, **extract})


def _tree_bytes(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("procs", [2, 3])
def test_ranks_write_the_same_store_as_one_process(setup, procs):
    tmp, data_path, backbone, single = setup
    out = tmp / f"procs{procs}" / "vit.zarr"
    run = subprocess.run(_command(tmp, data_path, backbone, out, procs=procs), capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert f"per process on {procs}" in run.stdout and "12 shards" in run.stdout  # the plan, printed once
    assert run.stdout.count("12 shards") == 1
    assert _tree_bytes(out) == _tree_bytes(single)  # every array, every metadata file
    assert not (out.parent / ".partial" / "vit.zarr").exists()


def _children(pid: int) -> list[int]:
    kids = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        kids += [int(k) for k in (task / "children").read_text().split()]
    return kids


def _ranks_writing(launcher: subprocess.Popen, markers: Path) -> list[int]:
    """The launcher's rank processes, once a first training shard is written (or the launcher has ended)."""
    deadline = time.time() + 120
    while time.time() < deadline and launcher.poll() is None:
        if markers.is_dir() and any(p.name.startswith("train.") for p in markers.iterdir()):
            break
        time.sleep(0.01)
    return _children(launcher.pid)


def test_a_killed_rank_is_named_and_the_rerun_resumes_to_the_same_store(setup):
    tmp, data_path, backbone, _ = setup
    slow = {"batch_size": 1}  # many small batches, so a rank can be killed mid-way
    reference = tmp / "killed-reference" / "vit.zarr"
    run = subprocess.run(_command(tmp, data_path, backbone, reference, procs=1, **slow), capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    out = tmp / "killed" / "vit.zarr"
    markers = out.parent / ".partial" / "vit.zarr.progress"
    launcher = subprocess.Popen(_command(tmp, data_path, backbone, out, procs=2, **slow), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
    ranks = _ranks_writing(launcher, markers)
    assert launcher.poll() is None and len(ranks) == 2, "finished before a rank could be killed; enlarge the work"
    os.kill(ranks[1], signal.SIGKILL)
    finished = sum(1 for p in markers.iterdir() if p.name != "spec.json")
    assert finished < 12, "every shard was written before the kill; enlarge the work"
    _, stderr = launcher.communicate(timeout=120)
    assert launcher.returncode == 2  # one line from the launcher (laya.core.cli.run)
    last = stderr.strip().splitlines()[-1]
    assert "of 2 failed (killed by SIGKILL)" in last and "rerun the same command to resume" in last, stderr
    assert "Traceback" not in stderr
    assert not out.exists()  # nothing under the final name
    resumed = subprocess.run(_command(tmp, data_path, backbone, out, procs=1, **slow), capture_output=True,
                             text=True)  # resumed by one process: shards do not belong to a rank
    assert resumed.returncode == 0, resumed.stderr
    assert "resumed" in resumed.stdout
    assert _tree_bytes(out) == _tree_bytes(reference)


@pytest.mark.parametrize("how, status, said", [
    ("ctrl-c", 130, ["interrupted: nothing was written under a final name; rerun to resume."]),
    ("sigterm", 143, []),  # what a killed `dvc repro` sends the stage (PR_SET_PDEATHSIG): quiet, as any stage
])
def test_a_stopped_launcher_stops_its_ranks_in_one_line(setup, how, status, said):
    """Ctrl-C (SIGINT to the whole process group: the launcher and every rank) or SIGTERM of the stage: the
    ranks stop, the exit status is the signal's, and only rank 0 speaks — no agent log, no traceback."""
    tmp, data_path, backbone, _ = setup
    out = tmp / f"stopped-{how}" / "vit.zarr"
    markers = out.parent / ".partial" / "vit.zarr.progress"
    launcher = subprocess.Popen(_command(tmp, data_path, backbone, out, procs=2, batch_size=1),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    ranks = _ranks_writing(launcher, markers)
    assert launcher.poll() is None and len(ranks) == 2, "finished before it could be stopped; enlarge the work"
    if how == "ctrl-c":
        os.killpg(launcher.pid, signal.SIGINT)
    else:
        launcher.send_signal(signal.SIGTERM)
    _, stderr = launcher.communicate(timeout=60)
    lines = [line for line in re.sub(r"extract@vit rank \d of 2:[^\r\n]*?img/s\]", "", stderr).splitlines()
             if line.strip()]  # what was said, without rank 0's progress bar
    assert launcher.returncode == status and lines == said, stderr
    assert not any(os.path.exists(f"/proc/{rank}") for rank in ranks) and not out.exists()


@pytest.mark.parametrize("extract, device, message", [
    ({"procs": 13}, "cpu", "13 processes but the store has only 12 shards of 32 samples; use at most 12"),
    ({"procs": 0}, "cpu", "extract.procs"),
    ({}, "cuda", "device: 'cuda' requested but CUDA is not available"),
    ({"autocast": "bf16"}, "cpu", "extract.autocast: 'bf16' needs a CUDA device, but the stage runs on cpu"),
    ({"autocast": "fp8"}, "cpu", "extract.autocast"),
])
def test_what_cannot_work_is_refused_in_one_line(setup, extract, device, message):
    if device == "cuda" and torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    tmp, data_path, backbone, _ = setup
    out = tmp / "refused" / "vit.zarr"
    cmd = _command(tmp, data_path, backbone, out, **extract)
    params = yaml.safe_load(Path(cmd[3]).read_text())
    Path(cmd[3]).write_text(yaml.safe_dump({**params, "device": device}))
    run = subprocess.run(cmd, capture_output=True, text=True)
    assert run.returncode != 0
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], run.stderr
    assert not out.exists() and not (out.parent / ".partial").exists()
