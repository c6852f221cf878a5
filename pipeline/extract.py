"""Stage `extract@<name>`: run a frozen backbone once over every split and cache per-layer activations.

    python pipeline/extract.py --name vit --data data/prepared/fashion_mnist.zarr \
        --backbone data/backbones/vit --out data/features/vit.zarr

Reads params `extract`, `clt.backbone` (whose cache gets the MLP inputs/outputs when
`extract.mlp_io: auto`) and `device`. Resumable: kill it at any moment and run it again; it continues from
the completed shards kept in <out's folder>/.partial/ and the final store is bit-identical.
"""

from pathlib import Path

from laya.backbones import load_backbone
from laya.cli import parser, run
from laya.config import ConfigError, from_dict, load_params, section
from laya.data import PreparedData
from laya.device import device_from_params
from laya.extract import ExtractConfig, extract_features
from laya.io import human_bytes


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--name", required=True, help="backbone name, a key of params `backbones`")
    p.add_argument("--data", required=True, help="prepared store (output of `prepare`)")
    p.add_argument("--backbone", required=True, help="frozen backbone folder (output of `backbone@<name>`)")
    p.add_argument("--out", required=True, help="feature store to write, e.g. data/features/vit.zarr")
    p.add_argument("--work-dir", default=None, help="where the store is built (default: <out folder>/.partial)")
    args = p.parse_args()
    params = load_params(args.params)
    clt_backbone = (params.get("clt") or {}).get("backbone")
    cfg = from_dict(ExtractConfig, section(params, "extract"), "extract").for_backbone(args.name, clt_backbone)
    data = PreparedData(args.data)
    model, card = load_backbone(args.backbone)
    if card.data_sha256 != data.attrs["data_sha256"]:
        raise ConfigError(f"{args.backbone}: backbone was trained on other prepared data than {args.data}; "
                          f"rerun `dvc repro backbone@{args.name}`.")
    summary = extract_features(model, card, data, args.out, cfg, device_from_params(params),
                               Path(args.work_dir) if args.work_dir else None)
    resumed = f", resumed {summary['resumed_shards']} shards" if summary["resumed_shards"] else ""
    print(f"extract@{args.name}: wrote {args.out} ({len(summary['layers'])} layers {summary['dims']}, "
          f"{summary['files']} files, {human_bytes(summary['bytes'])} on disk from "
          f"{human_bytes(summary['raw_bytes_written'])}) in {summary['seconds']:.1f}s{resumed}")


if __name__ == "__main__":
    run(main)
