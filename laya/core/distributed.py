"""One job, several processes: the ranks torchrun starts, and the stage that starts torchrun.

`torchrun --nproc-per-node G [--nnodes N …] script …` runs `script` once per rank with RANK, WORLD_SIZE and
LOCAL_RANK in the environment; `Ranks.from_env()` reads them (world 1 without torchrun) and joins the process
group (gloo on CPU, NCCL on CUDA). Work is split by `mine(items)`: rank r takes items r, r + W, r + 2W, …
`launch(procs, argv)` is how a DVC stage runs itself under torchrun on this machine.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import TypeVar

import torch
import torch.distributed as dist

from laya.core.config import ConfigError
from laya.core.process import PEER_FAILED

Item = TypeVar("Item")
TIMEOUT = timedelta(hours=2)  # how long a rank waits at a barrier for the slowest one (a shard can take minutes)


@dataclass(frozen=True)
class Ranks:
    rank: int = 0
    world: int = 1
    local_rank: int = 0
    local_world: int = 1  # ranks on this machine

    @classmethod
    def from_env(cls) -> Ranks:
        """This process's rank as torchrun set it (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE); rank 0 of 1
        otherwise."""
        env = os.environ
        try:
            return cls(int(env.get("RANK", 0)), int(env.get("WORLD_SIZE", 1)), int(env.get("LOCAL_RANK", 0)),
                       int(env.get("LOCAL_WORLD_SIZE", 1)))
        except ValueError:
            raise ConfigError(f"RANK/WORLD_SIZE/LOCAL_RANK: expected integers (as torchrun sets them), got "
                              f"{os.environ.get('RANK')!r}/{os.environ.get('WORLD_SIZE')!r}; unset them or start "
                              f"the script with torchrun.") from None

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world > 1

    def device(self, device: torch.device) -> torch.device:
        """The device of this rank: `cuda` becomes this rank's GPU on its node (cuda:<local rank>)."""
        if device.type == "cuda" and device.index is None and self.distributed:
            return torch.device("cuda", self.local_rank % max(1, torch.cuda.device_count()))
        return device

    def start(self, device: torch.device) -> None:
        """Join the process group (torchrun's rendezvous in the environment); nothing to do for one process."""
        if self.distributed and not dist.is_initialized():
            if device.type == "cuda":
                torch.cuda.set_device(device)
            dist.init_process_group("nccl" if device.type == "cuda" else "gloo", timeout=TIMEOUT)

    def stop(self) -> None:
        if self.distributed and dist.is_initialized():
            dist.destroy_process_group()

    def barrier(self) -> None:
        """Wait until every rank got here."""
        if self.distributed:
            dist.barrier()

    def mine(self, items: list[Item]) -> list[Item]:
        """This rank's share: items rank, rank + world, … (whole items, never a part of one)."""
        return items[self.rank::self.world]


def launch(procs: int, argv: list[str], what: str) -> None:
    """Run `python argv…` as `procs` ranks on this machine with torchrun's launcher (torch.distributed's elastic
    agent, as `torchrun --standalone --nproc-per-node procs argv…` would) and wait for them.

    A rank that stops on an error prints its own one line (laya.core.cli.run) and this process exits with its status;
    the agent's log is kept quiet; a rank killed otherwise (a signal) is named in one line with how to resume.
    Ctrl-C or SIGTERM of this process stops the ranks and exits with 130 / 143, as a stage does."""
    from torch.distributed.elastic.multiprocessing.api import SignalException
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.launcher.api import LaunchConfig, elastic_launch

    for name in [n for n in logging.root.manager.loggerDict if n.startswith("torch.distributed.elastic")]:
        logging.getLogger(name).setLevel(logging.CRITICAL)  # each module's logger has its own level (WARNING)
    config = LaunchConfig(min_nodes=1, max_nodes=1, nproc_per_node=procs, run_id=uuid.uuid4().hex,
                          rdzv_backend="c10d", rdzv_endpoint="localhost:0", max_restarts=0, monitor_interval=0.1)
    os.environ.setdefault("OMP_NUM_THREADS", "1")  # one compute thread per rank, as torchrun sets it
    try:
        elastic_launch(config, sys.executable)(*argv)
    except SignalException as err:  # Ctrl-C or SIGTERM reached the agent, which has stopped the ranks
        # quietly, as laya.core.cli.run exits on these: rank 0 has said "interrupted" (Ctrl-C reaches every process)
        raise SystemExit(128 + err.sigval) from None
    except ChildFailedError as err:
        failures = sorted(err.failures.items())
        said = [f for _, f in failures if f.exitcode in (1, 2)]
        if said:  # a rank stopped on an error and said why in one line (laya.core.cli.run)
            raise SystemExit(said[0].exitcode) from None
        # the cause, not a rank that stopped because its peer died (laya.core.process.PEER_FAILED) or because the agent
        # then stopped it (SIGTERM: -15, or 143 through laya.core.cli): those last, other signals first
        stopped = (PEER_FAILED, -signal.SIGTERM, 128 + signal.SIGTERM)
        rank, failure = min(failures, key=lambda rf: (rf[1].exitcode in stopped, rf[1].exitcode >= 0, rf[0]))
        how = f"killed by {failure.signal_name()}" if failure.exitcode < 0 else f"exit code {failure.exitcode}"
        raise ConfigError(f"{what}: rank {rank} of {procs} failed ({how}); rerun the same command to resume from "
                          f"the shards already written.") from None

