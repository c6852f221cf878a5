"""Perturbation-based evaluation of layer attributions: LOO effects, faithfulness, Deletion@1, explanations."""

from laya.ablation import ABLATIONS, ablate, ablation_values, deletion_curve, leave_one_out
from laya.evaluate.config import EvaluateConfig
from laya.evaluate.faithfulness import deletion_at_1, deletion_auc, faithfulness, spearman_rows
from laya.evaluate.methods import METHODS, build_method

__all__ = ["ABLATIONS", "METHODS", "EvaluateConfig", "ablate", "ablation_values", "build_method", "deletion_at_1",
           "deletion_auc", "deletion_curve", "faithfulness", "leave_one_out", "spearman_rows"]
