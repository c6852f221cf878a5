"""What each layer attribution costs: milliseconds per explained input, side by side in one run on the same inputs,
as a ratio to the head's own layer weights (`intrinsic`: LAYA's α, ALF's attention; one forward pass).

    python benchmarks/attributions.py [--backbones mlp vit] [--samples 2000] [--repeats 3] [--threads 1]

Each method of params `evaluate.methods` that explains the LAYA head (and the ALF head, where trained) runs through
the evaluate stage's own code (laya.evaluate.methods.build_method) on the first --samples test inputs of
data/features/<name>.zarr, in batches of evaluate.batch_size, with the seed-0 heads of data/heads/<name>; the
fastest of --repeats runs counts (the first also warms Captum's caches). The evaluate stage logs the same
quantity per run (reports/timings/, not a DVC output: wall-clock differs run to run); this script puts every method
on one machine state so the ratios can be compared.

Needs the pipeline's outputs (`make repro`): data/features/<name>.zarr and data/heads/<name>.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from laya.ablation import ablation_values
from laya.core.config import from_dict, section
from laya.core.parallel import torch_threads
from laya.core.params import load_params
from laya.evaluate.config import EvaluateConfig
from laya.evaluate.methods import INTRINSIC, PROBE, build_method
from laya.storage.statistics import layer_means
from laya.storage.store import FeatureStore
from laya.trained import load_heads, trained_heads
from record import recorded  # benchmarks/record.py: the output kept in benchmarks/results/

REPO = Path(__file__).resolve().parents[1]
EXPLAINED = ("laya", "alf")


def cost(root: Path, name: str, cfg: EvaluateConfig, samples: int, repeats: int, threads: int) -> None:
    """Print ms per explanation of every method on each explained head, and its ratio to the head's own weights."""
    store = FeatureStore.open(root / "data" / "features" / f"{name}.zarr")
    heads_dir = root / "data" / "heads" / name
    made = trained_heads(heads_dir) or []
    explained = [h for h in EXPLAINED if h in made]
    loaded, _, layers = load_heads(heads_dir, [*explained, *([PROBE] if PROBE in made else [])], 0, store, name)
    values = ablation_values(cfg.ablation, layer_means(store, "train", layers))
    batches = []
    for feats, _ in store.batches("test", cfg.batch_size, layers=layers):
        batches.append(feats)
        if sum(len(f[0]) for f in batches) >= samples:
            break
    count = sum(len(f[0]) for f in batches)
    for head_name in explained:
        head = loaded[head_name].eval()
        methods = [m for m, heads in cfg.methods.items() if head_name in heads and m not in ("random", "loo")]
        targets = [head(feats).argmax(1) for feats in batches]
        ms = {}
        for method_name in methods:
            method = build_method(method_name, values, 0, cfg.ig_steps, loaded.get(PROBE))
            best = float("inf")
            with torch_threads(threads):
                for _ in range(repeats):
                    start = time.perf_counter()
                    for feats, target in zip(batches, targets):
                        method.attribute(head, feats, target)
                    best = min(best, time.perf_counter() - start)
            ms[method_name] = 1000 * best / count
        base = ms.get(INTRINSIC)
        for method_name, value in ms.items():
            ratio = f"{value / base:8.1f}× the head's own weights" if base else ""
            print(f"{name:4s} {head_name:4s} {method_name:10s} {value:8.4f} ms per explanation  {ratio}", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backbones", nargs="+", default=["mlp", "vit"])
    p.add_argument("--samples", type=int, default=2000, help="test inputs explained per method")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=1, help="torch threads (the evaluate stage runs one per worker)")
    p.add_argument("--root", type=Path, default=REPO, help="the checkout whose data/ and params.yaml are read")
    args = p.parse_args()
    cfg = from_dict(EvaluateConfig, section(load_params(args.root / "params.yaml"), "evaluate"), "evaluate")
    print(f"torch threads: {args.threads}, {args.samples} test inputs, batch {cfg.batch_size}, "
          f"ig_steps {cfg.ig_steps}, ablation {cfg.ablation}, seed-0 heads")
    for name in args.backbones:
        cost(args.root, name, cfg, args.samples, args.repeats, args.threads)


if __name__ == "__main__":
    with recorded(__file__):
        main()
