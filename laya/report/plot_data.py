"""The data files behind dvc.yaml's top-level plots (reports/plots/), one file per chart:

- curves/<backbone>.csv      head, epoch, val_acc: validation accuracy per epoch, mean over the seeds that ran it
- faithfulness/<backbone>.csv, deletion_at_1/<backbone>.csv   attribution ("method@head"), value, std
- frontier.csv               activation, label, cls_l0, cls_r2, patch_l0, patch_r2 of the clt_frontier sweep
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from laya.records.clt import FrontierRecord
from laya.records.evaluate import EvaluateRecord
from laya.report.inputs import ReportInputs


def curves(inputs: ReportInputs, name: str) -> pd.DataFrame:
    frames = []
    for head in _ordered(inputs.heads, [p.stem for p in sorted((inputs.curves / name).glob("*.csv"))]):
        runs = pd.read_csv(inputs.curves / name / f"{head}.csv")
        mean = runs.groupby("epoch", sort=True)["val_acc"].mean().round(6)
        frames.append(pd.DataFrame({"head": head, "epoch": mean.index, "val_acc": mean.to_numpy()}))
    return pd.concat(frames, ignore_index=True)


def method_scores(evaluation: EvaluateRecord, group: str, pairs: list[tuple[str, str]]) -> pd.DataFrame:
    rows = [{"attribution": f"{m}@{h}", group: score.mean, "std": score.std}
            for m, h in _ordered(pairs, evaluation.pairs()) if (score := evaluation.score(group, h, m)) is not None]
    return pd.DataFrame(rows)


def frontier(record: FrontierRecord) -> pd.DataFrame:
    """One row per sweep point; `activation` names the series (a per-layer baseline's keeps its prefix:
    'sae_relu_topk' is its own line beside the CLT's 'relu_topk')."""
    rows = [{"activation": label.split("_k")[0].split("_l0")[0], "label": label, "cls_l0": p.cls_l0,
             "cls_r2": p.cls_r2, "patch_l0": p.patch_l0, "patch_r2": p.patch_r2}
            for label, p in record.points.items()]
    return pd.DataFrame(rows)


def write_plot_data(inputs: ReportInputs, out: Path) -> list[Path]:
    """Write every chart's data under `out`; returns the files written."""
    written = []

    def save(frame: pd.DataFrame, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        frame.to_csv(path, index=False)
        written.append(path)

    for name in inputs.backbones:
        if inputs.curves is not None and (inputs.curves / name).is_dir():
            save(curves(inputs, name), out / "curves" / f"{name}.csv")
        evaluation = inputs.evaluate(name)
        if evaluation is not None:
            for group in ("faithfulness", "deletion_at_1"):
                save(method_scores(evaluation, group, inputs.pairs), out / group / f"{name}.csv")
    points = inputs.frontier()
    if points is not None:
        save(frontier(points), out / "frontier.csv")
    return written


def _ordered(first: list, found: list) -> list:
    """`found`, in the order of `first` where listed there, the rest after."""
    return [x for x in first if x in found] + [x for x in found if x not in first]
