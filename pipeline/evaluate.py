"""Stage `evaluate@<name>`: score every layer-attribution method against leave-one-layer-out on the test split,
write WIA-AI-009 explanations and figures. Reads the feature cache and the trained heads only.

    python pipeline/evaluate.py --name mlp --features data/features/mlp.zarr --heads data/heads/mlp \
        --metrics reports/metrics/evaluate_mlp.json --patterns reports/depth/mlp.json \
        --explanations reports/explanations/mlp.jsonl --figures reports/figures/mlp

Reads params `evaluate`.
"""

import json
import time
from pathlib import Path

from laya import plots
from laya.cli import parser, run
from laya.config import ConfigError, from_dict, load_params, section
from laya.evaluate import EvaluateConfig
from laya.evaluate.explain import explanations, load_schema, validate
from laya.evaluate.run import depth_patterns, evaluate_heads, layer_means, metrics, summarise_seeds
from laya.io import atomic_path, read_json, write_json
from laya.store import FeatureStore


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--name", required=True, help="backbone name, a key of params `backbones`")
    p.add_argument("--features", required=True, help="feature store (output of `extract@<name>`)")
    p.add_argument("--heads", required=True, help="trained heads folder (output of `train@<name>`)")
    p.add_argument("--metrics", required=True, help="DVC metrics JSON to write")
    p.add_argument("--patterns", required=True, help="JSON of depth patterns (class × layer α, agreement, curves)")
    p.add_argument("--explanations", required=True, help="JSONL of WIA-AI-009 explanations to write")
    p.add_argument("--figures", required=True, help="folder for the PNG figures")
    args = p.parse_args()
    cfg = from_dict(EvaluateConfig, section(load_params(args.params), "evaluate"), "evaluate")
    store = FeatureStore.open(args.features)
    configs = {}
    for seed in cfg.seeds:
        path = Path(args.heads) / "laya" / f"seed{seed}" / "config.json"
        if not path.is_file():
            raise ConfigError(f"{path}: no LAYA head trained with seed {seed}; evaluate.seeds must be a subset of "
                              f"train.seeds (rerun `dvc repro train@{args.name}`).")
        configs[seed] = read_json(path, "LAYA head config")
        if configs[seed]["cache_fingerprint"] != store.fingerprint["hash"]:
            raise ConfigError(f"{args.heads}: heads were trained on another cache than {args.features}; "
                              f"rerun `dvc repro train@{args.name}`.")
    head_config = configs[cfg.seeds[0]]
    started = time.perf_counter()
    means = layer_means(store, "train", head_config["layer_indices"])  # the same for every seed
    evaluations = [evaluate_heads(store, args.heads, cfg, seed, means) for seed in cfg.seeds]
    ev = evaluations[0]  # explanations, patterns and figures: the first seed
    scores, patterns = summarise_seeds([metrics(e) for e in evaluations]), depth_patterns(ev)
    payloads = explanations(ev, args.name, head_config, store.fingerprint["hash"], cfg.ablation, cfg.explain_n,
                            cfg.confidence) if "laya" in ev.attributions else []
    schema = load_schema()
    for payload in payloads:
        validate(payload, schema)
    write_json(args.metrics, scores)
    write_json(args.patterns, patterns)
    with atomic_path(args.explanations) as tmp:
        tmp.write_text("".join(json.dumps(p, sort_keys=True, ensure_ascii=False) + "\n" for p in payloads))
    with atomic_path(args.figures) as tmp:
        tmp.mkdir(parents=True)
        title = f"{args.name}: LAYA head (seed {cfg.seeds[0]}), {len(ev.labels)} test inputs"
        if "alpha_mean" in patterns:
            plots.alpha_per_layer(patterns, f"{title} — α per layer", tmp / "alpha_per_layer.png")
            plots.class_layer_heatmap(patterns, f"{args.name}: mean α by true class", tmp / "alpha_by_class.png")
            plots.correct_vs_wrong_heatmaps(patterns, f"{args.name}: mean α by true class",
                                            tmp / "alpha_by_class_correct_vs_wrong.png")
        plots.method_scores(scores, f"{args.name}: attribution methods vs leave-one-layer-out ({cfg.ablation}, "
                            f"mean of {len(cfg.seeds)} seeds)",
                            tmp / "methods.png")
        plots.deletion_curves(patterns, f"{args.name}: deletion curves", tmp / "deletion_curves.png")
        plots.agreement_matrix(patterns, f"{args.name}: method agreement", tmp / "agreement.png")
    line = ", ".join(f"{m} {scores['faithfulness'][m]:.3f}/{scores['deletion_at_1'][m]:.3f}"
                     for m in scores["faithfulness"])
    print(f"evaluate@{args.name}: faithfulness/Deletion@1 (mean of {len(cfg.seeds)} seeds) {line}; "
          f"{len(payloads)} explanations; "
          f"{time.perf_counter() - started:.0f}s")


if __name__ == "__main__":
    run(main)
