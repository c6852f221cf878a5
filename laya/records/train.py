"""The train stage's record (reports/details/train_<name>.json): each head's test accuracy over the seeds."""

from __future__ import annotations

from typing import ClassVar

from laya.core.record import Part, Record
from laya.core.seeds import mean_std


class OverSeeds(Part):
    """A test accuracy over seeds: mean, sample std and each seed's value ({"s<k>": value})."""

    mean: float
    std: float
    seeds: dict[str, float]


def _over_seeds(values: dict[int, float]) -> OverSeeds:
    mean, std = mean_std(list(values.values()))
    return OverSeeds(mean=mean, std=std, seeds={f"s{s}": round(v, 6) for s, v in values.items()})


class Mean(Part):
    mean: float


class TrainRecord(Record):
    """accuracy.<head>: test accuracy over the seeds; macro_f1.<head>.mean; layer_accuracy.<head>.<layer>: per-layer
    probes' accuracy; capped.<head>: seeds that had not converged."""

    STAGE: ClassVar[str] = "train@<name>"

    accuracy: dict[str, OverSeeds]  # {head: test accuracy over the seeds}
    macro_f1: dict[str, Mean]  # {head: mean macro-F1 over the seeds}
    layer_accuracy: dict[str, dict[str, OverSeeds]] = {}  # {head: {layer: test accuracy of the head's prediction
    # from that layer alone, over the seeds}}: heads with per-layer predictions (probe) only
    capped: dict[str, list[int]] = {}  # {head: its seeds whose training stopped at the epoch cap (train.epochs, a
    # joint head's joint.epochs) while still improving}: heads with none are absent

    @classmethod
    def of(cls, results: dict[str, dict[int, dict]]) -> TrainRecord:
        """From laya.train.run.train_units's results, {head: {seed: {"test_accuracy", "macro_f1", …}}}."""
        accuracy, macro_f1, layers, capped = {}, {}, {}, {}
        for head, runs in results.items():
            accuracy[head] = _over_seeds({s: r["test_accuracy"] for s, r in runs.items()})
            macro_f1[head] = Mean(mean=mean_std([r["macro_f1"] for r in runs.values()])[0])
            if stopped := sorted(s for s, r in runs.items() if r["capped"]):
                capped[head] = stopped
            if per_layer := [r["layer_accuracy"] for r in runs.values() if r.get("layer_accuracy")]:
                layers[head] = {layer: _over_seeds({s: r["layer_accuracy"][layer] for s, r in runs.items()})
                                for layer in per_layer[0]}
        return cls(accuracy=accuracy, macro_f1=macro_f1, layer_accuracy=layers, capped=capped)
