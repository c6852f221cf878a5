"""Sanity checks for layer attributions: cascading model randomisation and data (label) randomisation."""

from laya.sanity.randomise import CASCADES, STEPS, PermutedLabels, cascade, reinitialise
from laya.sanity.run import check_head, similarity

__all__ = ["CASCADES", "STEPS", "PermutedLabels", "cascade", "check_head", "reinitialise",
           "similarity"]
