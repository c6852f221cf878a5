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
from laya.core.config import from_dict, section
from laya.core.device import device_from_params
from laya.core.io import staged
from laya.core.parallel import workers_from_params
from laya.core.params import load_params
from laya.evaluate import EvaluateConfig
from laya.sanity.figure import sanity_figure
from laya.sanity.run import sanity_checks
from laya.settings import resolve


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
    settings = resolve(params, args.name)
    device = device_from_params(params)
    started = time.perf_counter()
    record = sanity_checks(settings, evaluate, args.features, args.heads, device,
                           workers_from_params(params, device))
    with staged(args.metrics, args.figure) as (metrics, figure):
        record.write(metrics)
        sanity_figure(record.heads, f"{args.name}: attributions after destroying the weights or the labels (seed "
                      f"{record.seed})", figure)
    for name, r in record.heads.items():
        line = ", ".join(f"{m} {' → '.join(f'{v:.2f}' for v in steps.values())} | labels "
                         f"{r.data_randomisation[m]:.2f}" for m, steps in r.model_randomisation.items())
        print(f"sanity@{args.name} {name}: {line}")
    print(f"sanity@{args.name}: {len(record.heads)} heads in {time.perf_counter() - started:.0f}s")

if __name__ == "__main__":
    run(main)
