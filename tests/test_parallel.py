"""`workers`: a stage's independent runs in worker processes give the same bytes as one process, and bad values
are refused with one line."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
import torch
import zarr

from conftest import TINY_BACKBONES, write_feature_store
from laya import FeatureStore
from laya.backbones import BackboneConfig
from laya.check import check_params
from laya.core.config import ConfigError
from laya.core.parallel import resolve_workers, run_jobs
from laya.data import PreparedData
from laya.protocols.create import create_protocol
from laya.records.train import TrainRecord
from laya.train import HeadsConfig, TrainConfig, train_heads


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_heads_trained_in_two_workers_are_the_bytes_of_one_process(tmp_path):
    store = FeatureStore.open(write_feature_store(tmp_path / "toy.zarr"))
    heads = HeadsConfig(names=["laya", "laya_aligned"])
    cfg = TrainConfig(seeds=[0, 1], epochs=3, patience=3, batch_size=32, lr=0.01)
    threads = torch.get_num_threads()
    one = TrainRecord.of(train_heads(store, heads, cfg, tmp_path / "one", workers=1))
    assert torch.get_num_threads() == threads  # the in-process run gives its thread setting back
    two = TrainRecord.of(train_heads(store, heads, cfg, tmp_path / "two", workers=2))
    assert one == two
    files = _files(tmp_path / "one")
    assert len([f for f in files if f.endswith(".safetensors")]) == 4
    assert files == _files(tmp_path / "two")


def test_joint_models_trained_in_two_workers_are_the_bytes_of_one_process(tmp_path, prepared_path):
    tiny = TINY_BACKBONES["mlp"]
    cfg = BackboneConfig(arch="mlp", model=tiny.model, protocol="joint",
                         joint={"seeds": [0, 1], "epochs": 1, "batch_size": 64, "head": {"d_star": 8,
                                                                                         "scorer_hidden": 16}})
    data = PreparedData(prepared_path)
    summaries = {w: create_protocol("mlp_joint", cfg, data, tmp_path / f"w{w}", torch.device("cpu"), "b", w)
                 for w in (1, 2)}
    assert summaries[1] == summaries[2] and list(summaries[1].seeds) == ["seed0", "seed1"]
    assert _files(tmp_path / "w1") == _files(tmp_path / "w2")


def test_a_feature_store_travels_to_a_worker_as_its_path(tmp_path):
    path = write_feature_store(tmp_path / "toy.zarr")
    store = FeatureStore.open(path)
    store.keep_in_memory(1 << 20)
    copy = pickle.loads(pickle.dumps(store))
    assert copy.path == store.path and copy.layers == store.layers and copy._memory_budget == 1 << 20
    moved = pickle.dumps(store)
    root = zarr.open_group(path, mode="r+")
    root.attrs["fingerprint"] = {**root.attrs["fingerprint"], "hash": "rebuilt"}
    with pytest.raises(ConfigError, match="toy.zarr: the feature store changed while a stage was reading it"):
        pickle.loads(moved)


def test_an_error_in_a_worker_is_raised_as_raised_there():
    with pytest.raises(ValueError, match="invalid literal for int"):
        run_jobs(int, ["1", "two"], workers=2)
    assert run_jobs(int, ["1", "2", "3"], workers=2) == [1, 2, 3]
    assert run_jobs(int, ["1", "2", "3"], workers=2, cost=int) == [1, 2, 3]  # costliest first, results in order


def test_an_error_stops_the_other_runs_at_once():
    """time.sleep("x") fails at once beside a run of a minute: raised without waiting for it, its worker gone."""
    import multiprocessing
    import time

    started = time.monotonic()
    with pytest.raises(TypeError):
        run_jobs(time.sleep, [60, "x", 60], workers=2)
    assert time.monotonic() - started < 30 and multiprocessing.active_children() == []


STAGE = """
import os, sys, time
from pathlib import Path
from laya.core.cli import run
from laya.core.parallel import run_jobs

def job(seconds):
    Path(sys.argv[1], str(os.getpid())).touch()
    time.sleep(seconds)

if __name__ == "__main__":
    run(lambda: run_jobs(job, [60, 60, 60], workers=2))
"""


def _gone(pid: int) -> bool:
    import os

    return not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.parametrize("how", ["ctrl-c", "sigterm", "sigkill"])
def test_a_stopped_stage_leaves_no_worker_running(tmp_path, how):
    """Ctrl-C (SIGINT to the whole group), SIGTERM (what a killed `dvc repro` sends, PR_SET_PDEATHSIG) or SIGKILL
    of the stage: its workers stop within seconds, not after their minute-long runs."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from conftest import REPO

    script, pids = tmp_path / "stage.py", tmp_path / "pids"
    script.write_text(STAGE)
    pids.mkdir()
    stage = subprocess.Popen([sys.executable, str(script), str(pids)], cwd=REPO, start_new_session=True,
                             stderr=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while len(list(pids.iterdir())) < 2 and time.monotonic() < deadline:  # both workers are in a run
        time.sleep(0.05)
    workers = [int(p.name) for p in pids.iterdir()]
    assert len(workers) == 2, stage.stderr.read() if stage.poll() is not None else "the workers never started"
    stopped = time.monotonic()
    if how == "ctrl-c":
        os.killpg(stage.pid, signal.SIGINT)
    else:
        stage.send_signal(signal.SIGTERM if how == "sigterm" else signal.SIGKILL)
    stage.wait(timeout=30)
    while not all(map(_gone, workers)) and time.monotonic() - stopped < 30:
        time.sleep(0.05)
    assert all(map(_gone, workers)) and time.monotonic() - stopped < 30, how
    assert stage.returncode == {"ctrl-c": 130, "sigterm": 143, "sigkill": -9}[how], stage.stderr.read()


@pytest.mark.parametrize("value", [0, -1, "two", 1.5, True, None])
def test_workers_refuses_bad_values(value):
    with pytest.raises(ConfigError, match=r"workers: expected auto or an integer ≥ 1 .* fix it in params.yaml"):
        resolve_workers(value)


def test_workers_auto_is_one_per_core_on_cpu_and_one_on_cuda():
    assert resolve_workers("auto", "cpu") >= 1
    assert resolve_workers("auto", "cuda") == 1
    assert resolve_workers(3) == 3


def test_params_check_refuses_bad_workers():
    params = {"workers": 0, "data": {}, "backbones": {"mlp": {"backbone": {"arch": "mlp"}}}}
    with pytest.raises(ConfigError, match="workers: expected auto or an integer"):
        check_params(params)
