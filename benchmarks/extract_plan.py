"""The extraction plan for a dataset that is not on this machine: what a cache of it would hold and cost.

Prints, from the same code every extraction prints its plan with (laya.extract.plan), the plan for a timm model
at its own input size (random init: shapes do not depend on the weights) over the given split sizes, e.g. the
default — ViT-B/16 on ImageNet-1k (1,281,167 training images, 50,000 of them held out for val; the 50,000
official validation images as test) written by 2 nodes × 8 GPUs:

    python benchmarks/extract_plan.py [--model vit_base_patch16_224] [--sizes 1231167 50000 50000] [--procs 16]

Two caches: every block's CLS token (extract.pooling: cls), and every token of each block's MLP input and output
(extract.mlp_io: true, patch_tokens: all) with the share of one block's MLP output.
"""

from __future__ import annotations

import argparse

import timm
import torch

from laya.core.config import SPLITS
from laya.core.io import human_bytes
from laya.extract import ExtractConfig, LayerTap
from laya.extract.plan import ExtractionPlan, Layout
from record import recorded  # benchmarks/record.py: the output kept in benchmarks/results/


def plan_for(model: torch.nn.Module, sizes: dict[str, int], cfg: ExtractConfig, procs: int) -> ExtractionPlan:
    side = model.pretrained_cfg.get("input_size", (3, 224, 224))
    probe = torch.randn(1, *side)
    with torch.no_grad():
        layout = Layout(LayerTap(model, cfg.pooling, mlp_io=bool(cfg.mlp_io)), probe, cfg)
    return ExtractionPlan(layout, sizes, cfg, procs)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="vit_base_patch16_224", help="a timm model name")
    p.add_argument("--sizes", type=int, nargs=3, default=[1_231_167, 50_000, 50_000], metavar=("TRAIN", "VAL", "TEST"))
    p.add_argument("--procs", type=int, default=16, help="processes writing (torchrun ranks over all nodes)")
    p.add_argument("--shard-size", type=int, default=8192)
    args = p.parse_args()
    torch.manual_seed(0)
    model = timm.create_model(args.model, pretrained=False).eval()
    sizes = dict(zip(SPLITS, args.sizes))
    cls_only = ExtractConfig(mlp_io=False, shard_size=args.shard_size)
    every_token = ExtractConfig(mlp_io=True, patch_tokens="all", shard_size=args.shard_size)
    print(f"{args.model}, {sum(sizes.values()):,} images, {args.procs} processes, shards of {args.shard_size:,}")
    print(f"\nevery block's CLS token:\n  {plan_for(model, sizes, cls_only, args.procs).describe()}")
    plan = plan_for(model, sizes, every_token, args.procs)
    print(f"\nevery token of every block's MLP input and output:\n  {plan.describe()}")
    lay = plan.layout
    one_block = plan.bytes(arrays={k: v for k, v in plan.arrays.items() if k.startswith("mlp_out_")})
    print(f"  of which all {lay.prefix + lay.num_patches} tokens of one block's MLP output: "
          f"{human_bytes(one_block / lay.num_blocks)} ({one_block / lay.num_blocks / 1e9:,.0f} GB)")


if __name__ == "__main__":
    with recorded(__file__):
        main()
