"""Stage `clt_compare@<name>`: the CLS/patch asymmetry on another ViT (an entry with `clt_compare: true`) — a CLT
trained with the `clt` params on <name>'s cached MLP inputs/outputs, its reconstruction of the test tokens, and
the off-diagonal share of CLS and patch tokens with bootstrap intervals (laya.clt.asymmetry).

    python pipeline/clt_compare.py --name vit_transfer --features data/features/vit_transfer.zarr \
        --metrics reports/details/clt_compare_vit_transfer.json

Reads params `backbones.<name>.clt_compare` (false: writes only a record that the stage did not run), `clt` and
`device`; reads the feature cache only (no replacement runs: those are the `clt` stage's).
"""

import time

from laya.backbones.config import entry
from laya.clt import CLTConfig
from laya.clt.asymmetry import asymmetry, describe_asymmetry
from laya.clt.run import reconstruction, test_tokens, train_clt
from laya.core.cli import parser, run
from laya.core.config import from_dict, section
from laya.core.device import device_from_params
from laya.core.params import load_params
from laya.core.record import NotRun
from laya.records.clt import CLTCompareRecord
from laya.storage.store import FeatureStore


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--name", required=True, help="backbone name, a key of params `backbones`")
    p.add_argument("--features", required=True, help="its feature store, with MLP inputs/outputs (extract.mlp_io)")
    p.add_argument("--metrics", required=True, help="detail metrics JSON (the report's asymmetry table)")
    args = p.parse_args()
    params = load_params(args.params)
    found = entry(params, args.name)
    if not found.clt_compare:
        why = f"backbones.{args.name}.clt_compare is false"
        NotRun(not_run=why).write(args.metrics)
        print(f"clt_compare@{args.name}: not run ({why})")
        return
    cfg = from_dict(CLTConfig, section(params, "clt"), "clt")
    device = device_from_params(params)
    store = FeatureStore.open(args.features)
    started = time.perf_counter()
    print(f"clt_compare@{args.name}: {cfg.activation} CLT, {cfg.dict_size} features × {len(store.layers)} layers, "
          f"{cfg.tokens} tokens of {store.path}", flush=True)
    model, _ = train_clt(store, cfg, device=device, desc=f"clt_compare@{args.name}")
    tests = test_tokens(store)
    scores = reconstruction(model, tests, device)
    record = CLTCompareRecord(
        backbone=args.name, **{kind: {k: v for k, v in s.items() if k != "per_layer"} for kind, s in scores.items()},
        asymmetry=asymmetry(model, tests, store.info.patch_tokens_kept, cfg.bootstrap, cfg.seed, device))
    record.write(args.metrics)
    print(f"{describe_asymmetry(f'clt_compare@{args.name}', record.asymmetry)}; CLS R² {record.cls.r2:.4f}, "
          f"patch R² {record.patch.r2:.4f}; {time.perf_counter() - started:.0f}s")


if __name__ == "__main__":
    run(main)
