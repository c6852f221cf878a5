"""Stage `extract@<name>`: run a frozen backbone once over every split and cache per-layer activations.

    python pipeline/extract.py --name vit --data data/prepared/fashion_mnist.zarr \
        --backbone data/backbones/vit --out data/features/vit.zarr

Reads params `backbones.<name>.backbone` (its protocol: transfer caches the classes the backbone never saw;
joint one store per seed, as child groups seed<k>/ of --out), `extract`, `clt.backbone` and
`backbones.<name>.clt_compare` (a transcoder's backbone gets the MLP inputs/outputs when `extract.mlp_io: auto`)
and `device`. Resumable: kill it at any moment and run it again; it
continues from the completed shards kept in <out's folder>/.partial/ and the final store is bit-identical.

Several processes: `extract.procs: N` starts N ranks on this machine with torchrun's launcher; across machines
sharing a file system, start it with torchrun yourself (each rank writes whole shards; the store is the same):
    torchrun --nnodes 2 --nproc-per-node 8 --rdzv-backend c10d --rdzv-endpoint host0:29400 \
        pipeline/extract.py --name vit --data … --backbone … --out …
"""

import sys
from pathlib import Path

from laya.backbones.config import entry
from laya.clt.config import CLTConfig
from laya.core.cli import parser, run
from laya.core.config import from_dict, section
from laya.core.device import device_from_params
from laya.core.distributed import Ranks, launch
from laya.core.io import human_bytes
from laya.core.params import load_params
from laya.core.process import under_torchrun
from laya.data import SPLITS, PreparedData
from laya.extract import ExtractConfig
from laya.extract.plan import check_world, resolve_procs
from laya.extract.units import extract_joint, extract_unit
from laya.protocols import head_data
from laya.storage.location import Location


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--name", required=True, help="backbone name, a key of params `backbones`")
    p.add_argument("--data", required=True, help="prepared store (output of `prepare`)")
    p.add_argument("--backbone", required=True, help="frozen backbone folder (output of `backbone@<name>`)")
    p.add_argument("--out", required=True, help="feature store to write, e.g. data/features/vit.zarr or "
                   "s3://bucket/features/vit.zarr (credentials from the AWS environment variables)")
    p.add_argument("--work-dir", default=None, help="where the store is built (default: <out folder>/.partial)")
    args = p.parse_args()
    params = load_params(args.params)
    found = entry(params, args.name)
    key, bb = f"backbones.{args.name}.backbone", found.backbone
    transcoded = found.clt_compare or args.name == from_dict(CLTConfig, params.get("clt"), "clt").backbone
    cfg = from_dict(ExtractConfig, section(params, "extract"), "extract").for_backbone(transcoded)
    data = head_data(bb, PreparedData(args.data), key)
    device = device_from_params(params)
    cfg.check_device(device)
    sizes = {s: data.num_samples(s) for s in SPLITS}
    procs = resolve_procs(cfg.procs, device, sizes, cfg.shard_size)
    world = procs if not under_torchrun() else Ranks.from_env().world
    check_world(world, sizes, cfg.shard_size)
    Location.of(args.out).check_writable(f"extract@{args.name}")  # before any rank starts
    if procs > 1 and not under_torchrun():
        launch(procs, sys.argv, f"extract@{args.name}")
        return
    ranks = Ranks.from_env()
    device = ranks.device(device)
    ranks.start(device)
    try:
        if bb.protocol == "joint":
            summaries = extract_joint(args.name, bb, key, args.out, args.backbone, data, cfg, device, ranks)
        else:
            summaries = [extract_unit(args.name, Path(args.backbone), data, args.out, cfg, device, args.work_dir,
                                      ranks)]
    finally:
        ranks.stop()
    if not ranks.is_main:
        return
    for summary in summaries:
        resumed = f", resumed {summary['resumed_shards']} shards" if summary["resumed_shards"] else ""
        print(f"extract@{args.name}: wrote {summary['path']} ({len(summary['layers'])} layers {summary['dims']}, "
              f"{summary['files']} files, {human_bytes(summary['bytes'])} on disk from "
              f"{human_bytes(summary['raw_bytes_written'])}) in {summary['seconds']:.1f}s{resumed}")


if __name__ == "__main__":
    run(main)
