"""params.yaml `extract:` section."""

from __future__ import annotations

import contextlib
from dataclasses import asdict, dataclass, replace
from typing import Any

import torch

from laya.backbones.intermediates import POOLINGS
from laya.core.config import ConfigError, choice, require
from laya.storage.zarrio import CODECS

DTYPES = ("float16", "float32")
AUTOCASTS = {"none": None, "bf16": "bfloat16", "fp16": "float16"}  # extract.autocast → torch dtype of the forward


@dataclass(frozen=True)
class ExtractConfig:
    dtype: str = "float16"  # storage dtype of activations
    pooling: str = "cls"  # token layers: cls token or mean of patch tokens (CNN maps: global average)
    mlp_io: bool | str = "auto"  # ViTs: also store each block's MLP input (after norm2) and output;
    # auto = only for the backbone the transcoders use (params clt.backbone)
    patch_tokens: int | str = 4  # mlp_io patch tokens kept per image: a seeded sample of this many, or "all"
    batch_size: int = 256  # forward-pass batch
    shard_size: int = 8192  # samples per shard (a power of two); the unit of writing and of resuming
    codec: str = "none"  # none | lz4 | zstd — none: float16 activations hardly compress, and uncompressed shards
    # are written and read with one copy each (laya.storage.shard_files; benchmarks/extract.py and store.py)
    seed: int = 0  # patch-token sampling
    autocast: str = "none"  # CUDA only: run the frozen forward pass under autocast (bf16 | fp16); the cache keeps
    # `dtype`, and the store's fingerprint records the autocast (its values differ from a float32 forward)
    procs: int | str = "auto"  # processes (torchrun ranks) writing the store on this machine, each computing with
    # one torch thread, so the store is the same bytes for any count; auto = one per core on CPU, 1 on CUDA

    def validate(self, key: str = "extract") -> None:
        require(self.mlp_io in (True, False, "auto"), f"{key}.mlp_io", self.mlp_io, "auto, true or false")
        choice(self.dtype, DTYPES, f"{key}.dtype")
        choice(self.pooling, POOLINGS, f"{key}.pooling")
        choice(self.codec, CODECS, f"{key}.codec")
        choice(self.autocast, tuple(AUTOCASTS), f"{key}.autocast")
        require(self.batch_size >= 1, f"{key}.batch_size", self.batch_size, "an integer ≥ 1")
        require(self.shard_size >= 1 and self.shard_size & (self.shard_size - 1) == 0, f"{key}.shard_size",
                self.shard_size, "a power of two, e.g. 8192")
        require(self.procs == "auto" or (isinstance(self.procs, int) and not isinstance(self.procs, bool)
                                         and self.procs >= 1),
                f"{key}.procs", self.procs, "auto or an integer ≥ 1 (more than 1 are started with torchrun)")
        require(self.patch_tokens == "all" or (isinstance(self.patch_tokens, int) and self.patch_tokens >= 1),
                f"{key}.patch_tokens", self.patch_tokens, "a positive integer or \"all\"")

    def recorded(self) -> dict[str, Any]:
        """The settings a store records (root attrs `extract`): those that shape its values and layout — not
        `procs`, since any number of processes writes the same store."""
        values = asdict(self)
        del values["procs"]
        if self.autocast == "none":  # recorded only when it changes the values: a plain forward pass leaves it out
            del values["autocast"]
        return values

    def check_device(self, device: torch.device, key: str = "extract") -> None:
        """autocast runs on CUDA only (on a CPU it would silently compute another cache)."""
        if self.autocast != "none" and device.type != "cuda":
            raise ConfigError(f"{key}.autocast: {self.autocast!r} needs a CUDA device, but the stage runs on "
                              f"{device.type}; set {key}.autocast: none (or device: cuda on a machine with a GPU).")

    def autocast_context(self, device: torch.device) -> contextlib.AbstractContextManager:
        """The forward pass's autocast (a no-op for autocast: none)."""
        if self.autocast == "none":
            return contextlib.nullcontext()
        self.check_device(device)
        return torch.autocast(device_type="cuda", dtype=getattr(torch, AUTOCASTS[self.autocast]))

    def for_backbone(self, transcoded: bool) -> ExtractConfig:
        """The config one extract@<name> runs with: `mlp_io: auto` becomes true only for a backbone a transcoder
        reads (clt.backbone, or an entry with clt_compare: true): a ViT's MLP inputs/outputs are ~48 KB per image
        at 28×28, all tokens, and no other stage reads them."""
        return self if self.mlp_io != "auto" else replace(self, mlp_io=transcoded)
