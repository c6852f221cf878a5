"""Early exit over prefix heads: head k (k = 1..L) reads layers 1..k only; an input leaves at the first k whose
exit score reaches the threshold t (the last head answers whatever its score), so layers after k are never
computed for it.

Exit scores of head k on input x, each in [0, 1]:
    msp         max_c p_c^k(x) — BranchyNet-style confidence (Teerapittayanon et al. 2016): the baseline
    calibrated  P(head k is right | logit MSP) — a logistic regression per k fitted on val
    alpha       P(head k is right | logit MSP, α^k(x), H(α^k(x))) — the same with the prefix head's attention
`calibrated` isolates what fitting alone buys, so `alpha` − `calibrated` is what α adds. Why α: a prefix head
whose attention still leans on its newest layer is drawing on depth it has only just reached — evidence that
more depth would still change its answer; one that has settled on earlier layers has stopped gaining from
depth. The val fit learns how much that evidence is worth beside the confidence, per depth.

Threshold 0 exits every input at head 1; any threshold above 1 never exits early.
"""

from __future__ import annotations

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from laya.evaluate.failure import HeadOutputs, features

RULES = ("msp", "calibrated", "alpha")


def _inputs(outputs: HeadOutputs, rule: str) -> np.ndarray:
    """[logit MSP] (calibrated, or a one-layer head whose α ≡ 1 carries nothing), else the failure detector's
    [logit MSP, α, H(α)] (laya.evaluate.failure.features)."""
    both = features(outputs, "msp_alpha")
    return both[:, :1] if rule == "calibrated" or outputs.alpha.shape[1] == 1 else both


def exit_scores(val: list[HeadOutputs], test: list[HeadOutputs], rule: str) -> np.ndarray:
    """(N_test, L) score of each prefix head on each test input under `rule` (fitted on `val` where needed)."""
    if rule == "msp":
        return np.stack([t.probs.max(1) for t in test], 1)
    columns = []
    for v, t in zip(val, test):
        right = ~v.wrong
        if right.all() or not right.any():  # nothing to fit: the head is always (or never) right on val
            columns.append(np.full(len(t.labels), float(right.all())))
            continue
        model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
        model.fit(_inputs(v, rule), right)
        columns.append(model.predict_proba(_inputs(t, rule))[:, 1])
    return np.stack(columns, 1)


def exit_depth(scores: np.ndarray, threshold: float) -> np.ndarray:
    """(N,) 0-based index of the head each input leaves at: the first k with score ≥ threshold, else the last."""
    reached = scores >= threshold
    reached[:, -1] = True
    return reached.argmax(1)


def sweep(scores: np.ndarray, correct: np.ndarray, flops: list[int], thresholds: np.ndarray) -> list[dict]:
    """Per threshold: accuracy and mean backbone FLOPs spent (an input leaving at head k costs flops[k − 1]),
    and the share of inputs leaving at each head. `correct`: (N, L) whether head k is right on each input."""
    flops_arr, rows = np.asarray(flops, dtype=np.float64), np.arange(len(correct))
    points = []
    for t in thresholds:
        depth = exit_depth(scores, t)
        points.append({"threshold": round(float(t), 6), "accuracy": round(float(correct[rows, depth].mean()), 6),
                       "mean_flops": round(float(flops_arr[depth].mean()), 1),
                       "flops_fraction": round(float(flops_arr[depth].mean() / flops_arr[-1]), 6),
                       "exits": np.bincount(depth, minlength=len(flops)).tolist()})
    return points


def frontier_area(points: list[dict]) -> float:
    """Area under accuracy vs FLOPs fraction, over the sweep's points sorted by FLOPs (trapezoid), divided by the
    FLOPs range it spans: the mean accuracy over that range (comparable between rules sharing its ends)."""
    xy = sorted({(p["flops_fraction"], p["accuracy"]) for p in points})
    x, y = np.array([p[0] for p in xy]), np.array([p[1] for p in xy])
    if x[-1] == x[0]:
        return float(y.max())
    return float(np.trapezoid(y, x) / (x[-1] - x[0]))


def flops_within(points: list[dict], full_accuracy: float, tolerance: float) -> float | None:
    """The least FLOPs fraction of a sweep point whose accuracy is within `tolerance` of the full accuracy."""
    good = [p["flops_fraction"] for p in points if p["accuracy"] >= full_accuracy - tolerance]
    return min(good) if good else None
