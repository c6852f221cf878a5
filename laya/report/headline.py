"""The headline metrics: a few dozen numbers per backbone that `dvc exp show` and `dvc metrics diff` show by
default. Per-seed and per-layer detail stays in the stages' files under reports/details/ (not DVC metrics).
Keys are short so that a few `dvc exp show` columns fit a terminal: acc = test accuracy, faith = faithfulness
(Spearman of the attribution with the LOO effects), del1 = Deletion@1, fail = error detection
(laya.evaluate.failure), where = the spatial maps' deletion check (laya.spatial)."""

from __future__ import annotations

from laya.report.depth import depth_headline
from laya.report.failure import failure_headline
from laya.report.inputs import ReportInputs
from laya.report.spatial import spatial_headline

GROUPS = {"faithfulness": "faith", "deletion_at_1": "del1"}  # EvaluateRecord's field → headline key


def backbone_headline(inputs: ReportInputs, name: str) -> dict:
    """reports/metrics/<name>.json: <name>.{backbone_acc, acc.<head>, faith.<head>.<method>,
    del1.<head>.<method>, fail.auroc.<detector>, where.drop.<map>, prune.<ranking>, exit.<rule>} — test-split
    means over the seeds (prune, exit, where: one seed). The backbone's name leads every key, so each
    `dvc exp show` column says which backbone it is about."""
    train = inputs.train(name).accuracy
    heads = [*(h for h in inputs.heads if h in train), *(h for h in train if h not in inputs.heads)]
    out: dict = {"backbone_acc": inputs.backbone(name).test_accuracy, "acc": {h: train[h].mean for h in heads}}
    evaluation = inputs.evaluate(name)
    if evaluation is not None:
        for group, key in GROUPS.items():
            out[key] = getattr(evaluation, group)
        if evaluation.failure_detection is not None:
            out.update(failure_headline(evaluation.failure_detection))
        if evaluation.spatial is not None:
            out.update(spatial_headline(evaluation.spatial))
    depth = inputs.depth(name)
    if depth is not None:
        out.update(depth_headline(depth))
    return {name: out}


def clt_headline(inputs: ReportInputs) -> dict | None:
    """reports/metrics/clt.json: clt.{r2, l0}.{cls, patch} and the ViT's test accuracy with its MLP outputs
    taken from the CLT (clt.acc.{original, cls, patch}: none, the CLS tokens', every patch token's) and the mean
    off-diagonal share per token type (clt.offdiag.{cls, patch}: laya.clt.asymmetry)."""
    m = inputs.clt()
    if m is None:
        return None
    kinds = {"cls": m.cls, "patch": m.patch}
    r = m.replacement
    return {"clt": {"r2": {k: round(s.r2, 6) for k, s in kinds.items()},
                    "l0": {k: round(s.l0, 3) for k, s in kinds.items()},
                    "acc": {"original": r.original, "cls": r.cls, "patch": r.patch},
                    "offdiag": {"cls": m.asymmetry.cls.mean, "patch": m.asymmetry.patch.mean}}}
