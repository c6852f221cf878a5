"""The headline metrics (reports/metrics/<backbone>.json, clt.json): the same few keys in every backbone's file, so
`dvc metrics show` prints one row per backbone and `dvc exp show` / `dvc metrics diff` one column per question.
Everything else — every head, method, seed and layer — is in the stages' detail files under reports/details/ and
in the results pages."""

from __future__ import annotations

from laya.report.inputs import ReportInputs

HEAD = "laya"  # the head the headline is about: α is its layer attribution
LAST, ALF = "last", "alf"  # its baseline, and the other attentive fusion over all layers
INTRINSIC, LRP, IG = "intrinsic", "lrp_delta", "ig"  # evaluate's method names for α, LRP and Integrated Gradients
ALPHA = "alpha"  # α's name among the error detectors, the pruning rankings, the exit rules and the spatial maps
KEYS = {  # headline key → what it is (docs/reference/metrics.md is generated from this)
    "acc.backbone": "the backbone's own test accuracy",
    "acc.laya": "the LAYA head's test accuracy (mean over train.seeds)",
    "acc.last": "the LastLayer head's test accuracy: the last layer alone, the baseline LAYA's mixing must beat",
    "acc.alf": "the ALF head's test accuracy: the other published attentive fusion over all layers",
    "faith.alpha": "faithfulness of α: mean Spearman(α, leave-one-layer-out effect) over the test inputs",
    "faith.lrp": "faithfulness of LRP relative to the ablation value (lrp_delta) on the same head: one pass, like α",
    "faith.ig": "faithfulness of Integrated Gradients on the same head (the post-hoc reference)",
    "del1.alpha": "Deletion@1 of α: mean drop of p(predicted class) when α's top layer is ablated",
    "fail.alpha": "AUROC of α alone at telling wrong test predictions from right ones (0.5 = chance)",
    "where.alpha": "mean drop of p(predicted class) when the α-weighted map's top pixels are deleted (CNN, ViT)",
}  # the depth stage's pruning and early exit (frozen entries only) are in reports/details/depth_<name>.json
CLT_KEYS = {
    "clt.r2": "explained variance of the ViT's MLP outputs (CLS tokens), averaged over the blocks",
    "clt.acc": "the ViT's test accuracy with its CLS MLP outputs taken from the transcoder",
}


def backbone_headline(inputs: ReportInputs, name: str) -> dict:
    """reports/metrics/<name>.json: the keys of KEYS that apply to backbone `name` (a stage that did not run, a
    head not trained or a method not evaluated leaves its key out: `dvc metrics show` prints `-`)."""
    found: dict[str, float | None] = {"acc.backbone": inputs.backbone(name).test_accuracy}
    train = inputs.train(name).accuracy
    for head in (HEAD, LAST, ALF):
        if head in train:
            found[f"acc.{head}"] = train[head].mean
    evaluation = inputs.evaluate(name)
    if evaluation is not None:
        for key, group, method in (("faith.alpha", "faithfulness", INTRINSIC), ("faith.lrp", "faithfulness", LRP),
                                   ("faith.ig", "faithfulness", IG), ("del1.alpha", "deletion_at_1", INTRINSIC)):
            score = evaluation.score(group, HEAD, method)
            found[key] = None if score is None else score.mean
        if evaluation.failure_detection is not None:
            found["fail.alpha"] = evaluation.failure_detection.detector(ALPHA).auroc
        if evaluation.spatial is not None:
            found["where.alpha"] = evaluation.spatial.drop.get(ALPHA)
    return _nested({key: round(value, 6) for key, value in found.items() if value is not None})


def clt_headline(inputs: ReportInputs) -> dict | None:
    """reports/metrics/clt.json: CLT_KEYS (the per-token-type numbers are in reports/details/clt.json)."""
    m = inputs.clt()
    if m is None:
        return None
    return _nested({"clt.r2": round(m.cls.r2, 6), "clt.acc": round(m.replacement.cls, 6)})


def _nested(flat: dict[str, float]) -> dict:
    """{"a.b": v} → {"a": {"b": v}} (DVC flattens it back to a.b)."""
    out: dict = {}
    for key, value in flat.items():
        group, _, leaf = key.partition(".")
        out.setdefault(group, {})[leaf] = value
    return out
