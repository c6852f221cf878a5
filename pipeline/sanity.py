"""Stage `sanity@<name>`: do the layer attributions depend on the weights and labels they claim to explain?

    python pipeline/sanity.py --name mlp --features data/features/mlp.zarr --heads data/heads/mlp \
        --metrics reports/details/sanity_mlp.json --figure reports/figures/sanity_mlp.png

Reads params `evaluate.sanity` (heads, methods, samples, label epochs), `evaluate.ablation` and `evaluate.seeds`
(the same ablation values; the first evaluated seed is checked), `train` and `backbones.<name>.train` (the
permuted-label head's recipe), `backbones.<name>.backbone` (protocol joint: joint model 0's cache), `device` and
`workers` (heads side by side). For each head: cascading model randomisation (classifier → scorer → adapters)
and a head trained on permuted labels; per method the mean Spearman between its attributions on the trained and
on the destroyed head (laya.sanity).
"""

import time

from laya.core.cli import parser, run
from laya.core.config import ConfigError, from_dict, section
from laya.core.device import device_from_params
from laya.core.io import staged
from laya.core.parallel import run_jobs, workers_from_params
from laya.core.params import load_params
from laya.evaluate import EvaluateConfig
from laya.protocols import units
from laya.records.sanity import SanityRecord
from laya.sanity.figure import sanity_figure
from laya.sanity.run import SanityRun, check_run
from laya.settings import resolve
from laya.storage.statistics import layer_means
from laya.storage.store import FeatureStore
from laya.trained import load_heads, trained_heads, trained_seeds


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--name", required=True, help="backbone name, a key of params `backbones`")
    p.add_argument("--features", required=True, help="feature store (output of `extract@<name>`)")
    p.add_argument("--heads", required=True, help="trained heads folder (output of `train@<name>`)")
    p.add_argument("--metrics", required=True, help="detail JSON to write")
    p.add_argument("--figure", required=True, help="PNG to write")
    args = p.parse_args()
    params = load_params(args.params)
    evaluate = from_dict(EvaluateConfig, section(params, "evaluate"), "evaluate")
    cfg = evaluate.sanity_config()
    settings = resolve(params, args.name)
    train, bb, key = settings.train, settings.backbone, settings.backbone_key
    started = time.perf_counter()
    made = trained_heads(args.heads) or []
    heads = [h for h in cfg.heads if h in made]
    if not heads:
        raise ConfigError(f"evaluate.sanity.heads: none of {cfg.heads} was trained for {args.name} (trained: "
                          f"{made}); add one of them to heads.names.")
    store, seed = next((FeatureStore.open(unit.path(args.features)), seeds[0]) for unit in units(bb, key)
                       if (seeds := trained_seeds(evaluate.seeds, args.heads, evaluate.heads[0], unit.seeds)))
    loaded, _, layers = load_heads(args.heads, heads, seed, store, args.name)
    means = layer_means(store, "train", layers)
    device = device_from_params(params)
    runs = [SanityRun(head, store, layers, means, train, evaluate, str(device)) for head in loaded.values()]
    results = dict(zip(loaded, run_jobs(check_run, runs, workers_from_params(params, device))))
    with staged(args.metrics, args.figure) as (metrics, figure):
        SanityRecord(seed=seed, ablation=evaluate.ablation, heads=results).write(metrics)
        sanity_figure(results, f"{args.name}: attributions after destroying the weights or the labels (seed {seed})",
                      figure)
    for name, r in results.items():
        line = ", ".join(f"{m} {' → '.join(f'{v:.2f}' for v in steps.values())} | labels "
                         f"{r.data_randomisation[m]:.2f}" for m, steps in r.model_randomisation.items())
        print(f"sanity@{args.name} {name}: {line}")
    print(f"sanity@{args.name}: {len(results)} heads in {time.perf_counter() - started:.0f}s")


if __name__ == "__main__":
    run(main)
