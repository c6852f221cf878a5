"""Does α tell when a prediction is wrong? Error detectors fitted on the val split, scored on test.

    msp        1 − max_c p_c(x): the maximum-softmax-probability baseline (Hendrycks & Gimpel 2017), unfitted
    alpha      logistic regression on [α(x), H(α(x))]           (L + 1 features)
    msp_alpha  logistic regression on [logit MSP(x), α(x), H(α(x))]  (L + 2 features)

A detector's score is higher for inputs it believes wrong; errors are the positives of AUROC and AUPR
(average precision). H(α) = −Σ_i α_i log α_i. Also: whether α of wrongly predicted inputs differs from α of
correctly predicted ones of the same true class (a permutation test per class).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from scipy.stats import permutation_test
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import average_precision_score, roc_auc_score, roc_curve
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from laya.heads import LayerHead
from laya.storage.store import FeatureStore

DETECTORS = ("msp", "alpha", "msp_alpha")
_EPS = 1e-7


@dataclass
class HeadOutputs:
    """One head's predictions on one split: probs (N, C), alpha (N, L) its layer weights, labels (N,)."""

    probs: np.ndarray
    alpha: np.ndarray
    labels: np.ndarray

    @property
    def wrong(self) -> np.ndarray:
        """(N,) bool: the prediction argmax_c p_c differs from the label."""
        return self.probs.argmax(1) != self.labels


@torch.no_grad()
def head_outputs(store: FeatureStore, head: LayerHead, layers: list[int], split: str, batch_size: int,
                 device: torch.device | str = "cpu") -> HeadOutputs:
    """Softmax probabilities and layer weights of `head` over a whole split, read block-wise from the store."""
    head = head.to(device).eval()
    probs, alphas, labels = [], [], []
    for feats, y in store.batches(split, batch_size, layers=layers):
        feats = [f.to(device) for f in feats]
        probs.append(torch.softmax(head(feats), 1).float().cpu().numpy())
        alphas.append(head.layer_weights(feats).float().cpu().numpy())
        labels.append(y.numpy())
    return HeadOutputs(np.concatenate(probs), np.concatenate(alphas), np.concatenate(labels))


def _entropy(alpha: np.ndarray) -> np.ndarray:
    return -(alpha * np.log(np.clip(alpha, 1e-12, None))).sum(1, keepdims=True)


def features(outputs: HeadOutputs, detector: str) -> np.ndarray:
    """(N, F) inputs of a fitted detector (see the module docstring)."""
    msp = np.clip(outputs.probs.max(1, keepdims=True), _EPS, 1 - _EPS)
    alpha = np.concatenate([outputs.alpha, _entropy(outputs.alpha)], 1)
    if detector == "alpha":
        return alpha
    if detector == "msp_alpha":
        return np.concatenate([np.log(msp / (1 - msp)), alpha], 1)
    raise ValueError(f"no fitted detector {detector!r}; fitted: alpha, msp_alpha")


def detector_scores(val: HeadOutputs, test: HeadOutputs) -> dict[str, np.ndarray | None]:
    """Detector → (N_test,) error scores; a fitted detector is None when val has no errors (or only errors)."""
    scores: dict[str, np.ndarray | None] = {"msp": 1 - test.probs.max(1)}
    fittable = 0 < val.wrong.sum() < len(val.wrong)
    for detector in DETECTORS[1:]:
        if not fittable:
            scores[detector] = None
            continue
        model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
        model.fit(features(val, detector), val.wrong)
        scores[detector] = model.predict_proba(features(test, detector))[:, 1]
    return scores


def detection_metrics(val: HeadOutputs, test: HeadOutputs) -> dict:
    """{detector: {auroc, aupr}} on test (None where undefined: no test error, or no detector), and the counts."""
    wrong = test.wrong
    defined = 0 < wrong.sum() < len(wrong)
    out: dict = {}
    for detector, score in detector_scores(val, test).items():
        ok = defined and score is not None
        out[detector] = {"auroc": round(float(roc_auc_score(wrong, score)), 6) if ok else None,
                         "aupr": round(float(average_precision_score(wrong, score)), 6) if ok else None}
    out["test_errors"], out["val_errors"] = int(wrong.sum()), int(val.wrong.sum())
    return out


def roc_points(val: HeadOutputs, test: HeadOutputs) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Detector → (false positive rate, true positive rate) on test, for the detectors that are defined."""
    wrong = test.wrong
    if not 0 < wrong.sum() < len(wrong):
        return {}
    return {d: roc_curve(wrong, s)[:2] for d, s in detector_scores(val, test).items() if s is not None}


def alpha_shift_test(alpha: np.ndarray, labels: np.ndarray, wrong: np.ndarray, classes: int,
                     resamples: int, seed: int) -> list[dict | None]:
    """Per true class: is mean α of the wrong predictions different from that of the correct ones?

    Statistic: Σ_i |mean α_i(wrong) − mean α_i(correct)| (L1 distance of the mean layer weights); p-value of a
    permutation test (scipy.stats.permutation_test, independent samples, one-sided 'greater', `resamples`
    random relabellings; None with fewer than two inputs on a side). None for a class without both correct and
    wrong inputs."""
    rng = np.random.default_rng(seed)

    def distance(rows_wrong, rows_correct, axis):  # rows (..., n): alpha[rows] is (..., n, L)
        return np.abs(alpha[rows_wrong].mean(axis - 1) - alpha[rows_correct].mean(axis - 1)).sum(-1)

    out: list[dict | None] = []
    for c in range(classes):
        in_class = labels == c
        rows_wrong, rows_correct = np.flatnonzero(in_class & wrong), np.flatnonzero(in_class & ~wrong)
        if len(rows_wrong) == 0 or len(rows_correct) == 0:
            out.append(None)
            continue
        entry = {"l1_shift": round(float(distance(rows_wrong, rows_correct, -1)), 6), "p_value": None,
                 "wrong": int(len(rows_wrong)), "correct": int(len(rows_correct))}
        if min(len(rows_wrong), len(rows_correct)) >= 2:  # scipy's test needs two inputs on each side
            entry["p_value"] = round(float(permutation_test(
                (rows_wrong, rows_correct), distance, permutation_type="independent", vectorized=True,
                n_resamples=resamples, alternative="greater", axis=-1, batch=100, random_state=rng).pvalue), 6)
        out.append(entry)
    return out
