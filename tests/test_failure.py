"""Error detection from α (laya.evaluate.failure) on hand-set outputs where the answer is known."""

from __future__ import annotations

import numpy as np
import pytest

from laya.core.config import ConfigError, from_dict
from laya.evaluate import EvaluateConfig
from laya.evaluate.failure import HeadOutputs, alpha_shift_test, detection_metrics, roc_points
from laya.evaluate.scores import summarise_seeds


def outputs(wrong: np.ndarray, alpha: np.ndarray, confidence: np.ndarray) -> HeadOutputs:
    """Two classes, label 0 everywhere; a wrong input predicts class 1 with `confidence`, a correct one class 0."""
    p_top = np.asarray(confidence, dtype=float)
    probs = np.stack([np.where(wrong, 1 - p_top, p_top), np.where(wrong, p_top, 1 - p_top)], 1)
    return HeadOutputs(probs, np.asarray(alpha, dtype=float), np.zeros(len(wrong), dtype=int))


def separable(n: int, seed: int) -> HeadOutputs:
    """Errors put their weight on layer 0, correct inputs on layer 2; MSP is noise, unrelated to the errors."""
    rng = np.random.default_rng(seed)
    wrong = np.arange(n) % 4 == 0
    alpha = np.where(wrong[:, None], [0.7, 0.2, 0.1], [0.1, 0.2, 0.7]) + rng.uniform(0, 0.05, (n, 3))
    return outputs(wrong, alpha / alpha.sum(1, keepdims=True), rng.uniform(0.55, 0.99, n))


def test_a_detector_on_perfectly_separable_alpha_has_auroc_1_and_msp_does_not():
    scores = detection_metrics(separable(400, 0), separable(200, 1))
    assert scores["alpha"] == {"auroc": 1.0, "aupr": 1.0}
    assert scores["msp_alpha"]["auroc"] == 1.0
    assert 0.3 < scores["msp"]["auroc"] < 0.7  # MSP carries nothing about these errors
    assert scores["test_errors"] == 50 and scores["val_errors"] == 100


def test_msp_detects_errors_made_with_low_confidence():
    n = 300
    wrong = np.arange(n) % 3 == 0
    alpha = np.full((n, 2), 0.5)  # α says nothing
    test = outputs(wrong, alpha, np.where(wrong, 0.55, 0.95))
    scores = detection_metrics(test, test)
    assert scores["msp"]["auroc"] == 1.0
    assert scores["alpha"]["auroc"] == pytest.approx(0.5)


def test_detectors_without_errors_to_fit_or_score_are_null():
    val = separable(100, 0)
    no_errors = outputs(np.zeros(100, bool), val.alpha, np.full(100, 0.9))
    scores = detection_metrics(no_errors, val)
    assert scores["alpha"] == scores["msp_alpha"] == {"auroc": None, "aupr": None}
    assert scores["msp"]["auroc"] is not None
    assert detection_metrics(val, no_errors)["msp"] == {"auroc": None, "aupr": None}
    assert roc_points(val, no_errors) == {}
    assert set(roc_points(val, separable(100, 1))) == {"msp", "alpha", "msp_alpha"}


def test_failure_scores_over_seeds_keep_nulls_and_labels():
    one = {"failure_detection": {"head": "laya", "msp": {"auroc": 0.9}, "alpha": {"auroc": None}}}
    two = {"failure_detection": {"head": "laya", "msp": {"auroc": 0.8}, "alpha": {"auroc": None}}}
    summary = summarise_seeds([one, two])
    assert summary["failure_detection"] == {"head": "laya", "msp": {"auroc": 0.85}, "alpha": {"auroc": None}}
    assert summary["failure_detection_std"]["msp"]["auroc"] == pytest.approx(np.std([0.9, 0.8], ddof=1), abs=1e-6)
    assert summary["failure_detection_std"]["alpha"]["auroc"] is None


def test_alpha_shift_is_significant_only_where_alpha_differs():
    labels = np.repeat([0, 1, 2], 60)
    wrong = np.tile(np.arange(60) % 3 == 0, 3)
    alpha = np.tile([0.5, 0.5], (180, 1))
    shifted = (labels == 0) & wrong
    alpha[shifted] = [0.9, 0.1]  # class 0: the wrong inputs lean on layer 0
    wrong[labels == 2] = False  # class 2: no wrong input…
    wrong[120] = True  # …but one: too few for the test
    tests = alpha_shift_test(alpha, labels, wrong, 3, resamples=199, seed=0)
    assert tests[0]["l1_shift"] == pytest.approx(0.8) and tests[0]["p_value"] == pytest.approx(1 / 200)
    assert tests[0]["wrong"] == 20 and tests[0]["correct"] == 40
    assert tests[1]["l1_shift"] == 0 and tests[1]["p_value"] == 1.0  # identical α: nothing to find
    assert tests[2] == {"l1_shift": 0.0, "p_value": None, "wrong": 1, "correct": 59}
    assert alpha_shift_test(alpha, labels, labels == 5, 3, resamples=199, seed=0) == [None] * 3  # nothing wrong
    again = alpha_shift_test(alpha, labels, wrong, 3, resamples=199, seed=0)
    assert again == tests  # seeded


def test_too_few_resamples_is_one_line():
    with pytest.raises(ConfigError, match=r"evaluate.shift_resamples: expected an integer ≥ 99"):
        from_dict(EvaluateConfig, {"shift_resamples": 10}, "evaluate")
