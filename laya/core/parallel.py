"""Independent runs of a stage (heads × seeds, joint models, evaluated seeds, sweep points) side by side in
worker processes: params `workers: auto | N`.

Every run computes with exactly one torch intra-op thread, whether it runs in this process (workers: 1) or in
one of N spawned workers. Float sums split over threads round differently, so a fixed thread count per run is
what makes a result the same bits for any `workers` and on any number of cores (tests/test_parallel.py). Small
heads and backbones gain less from a second thread than from a second single-thread run, so on CPU the default
is one worker per core.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from typing import Any, TypeVar

import torch

from laya.core.config import ConfigError
from laya.core.process import collect_nothing_at_exit, die_with_parent

Job = TypeVar("Job")
Result = TypeVar("Result")

THREADS_PER_RUN = 1


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity, not the host's count)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def resolve_workers(value: Any, device: torch.device | str = "cpu") -> int:
    """`workers: auto` → one per core on CPU, 1 on CUDA (runs would share one GPU); or an integer ≥ 1."""
    if value == "auto":
        return 1 if torch.device(device).type == "cuda" else available_cores()
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"workers: expected auto or an integer ≥ 1 (processes running a stage's independent "
                          f"runs), got {value!r}; fix it in params.yaml.")
    return value


def workers_from_params(params: dict[str, Any], device: torch.device | str = "cpu") -> int:
    """The worker count params.yaml asks for (top-level `workers`, default auto)."""
    return resolve_workers(params.get("workers", "auto"), device)


@contextmanager
def torch_threads(count: int) -> Iterator[None]:
    """Run the block with `count` torch intra-op threads, then restore the process's setting."""
    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def one_thread() -> contextlib.AbstractContextManager[None]:
    """Run the block with THREADS_PER_RUN torch threads (what every run of a stage computes with)."""
    return torch_threads(THREADS_PER_RUN)


def _start_worker() -> None:
    torch.set_num_threads(THREADS_PER_RUN)
    die_with_parent()  # a stage killed with SIGKILL leaves no worker running on
    collect_nothing_at_exit()  # the pool's shutdown waits for each worker's exit


@contextmanager
def _quiet_bars() -> Iterator[None]:
    """TQDM_DISABLE for the workers spawned inside the block (tqdm reads it at import, before an initializer runs):
    bars of several processes would interleave; each run prints its own line instead."""
    before = os.environ.get("TQDM_DISABLE")
    os.environ["TQDM_DISABLE"] = "1"
    try:
        yield
    finally:
        if before is None:
            del os.environ["TQDM_DISABLE"]
        else:
            os.environ["TQDM_DISABLE"] = before


def run_jobs(fn: Callable[[Job], Result], jobs: Sequence[Job], workers: int = 1,
             cost: Callable[[Job], float] | None = None) -> list[Result]:
    """[fn(job) for job in jobs], computed by min(workers, len(jobs)) processes of one torch thread each, results
    in job order. `cost`: a job's expected cost; the costliest start first, so that no long run is left alone at
    the end. `fn` must be a module-level function and every job picklable (a FeatureStore pickles as its path).
    The first error in a run is raised here, as raised there, as soon as it happens. An error, Ctrl-C or SIGTERM
    stops the other runs at once (their workers are terminated: what they wrote is under the stage's temporary
    names, which unwinding removes) instead of waiting for every queued run to finish."""
    workers = min(workers, len(jobs))
    if workers <= 1:
        with one_thread():
            return [fn(job) for job in jobs]
    order = sorted(range(len(jobs)), key=lambda i: -cost(jobs[i])) if cost is not None else list(range(len(jobs)))
    results: list = [None] * len(jobs)
    before = set(multiprocessing.active_children())
    # spawn: a fresh interpreter per worker (fork after torch has started its threads can deadlock)
    with _quiet_bars():
        pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_start_worker)
        try:
            futures = {pool.submit(fn, jobs[i]): i for i in order}
            for future in as_completed(futures):  # the first error as it happens, not after the runs before it
                results[futures[future]] = future.result()
        except BaseException:
            for worker in set(multiprocessing.active_children()) - before:  # this pool's workers
                worker.terminate()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
    return results
