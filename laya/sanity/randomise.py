"""What the sanity checks destroy: a head's weights, output layer first (Adebayo et al. 2018, cascading model
randomisation), or the training labels (data randomisation).

LAYA's cascade: classifier W, b → scorer (and ψ) → adapters g_i. α = softmax(Scorer(ψ(g(h))) / τ) never reads
the classifier, so the first step leaves α unchanged by construction. ALF's: classifier → the query's attention →
the layers' tokens (projections, norm, layer embedding).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator

import numpy as np
import torch
from torch import nn

from laya.heads import LayerHead
from laya.records.sanity import STEPS
from laya.storage.store import FeatureStore

_LAYA_CASCADE = tuple(zip(STEPS, (("classifier",), ("scorer", "psi"), ("adapters",)), strict=True))
_ALF_CASCADE = tuple(zip(STEPS, (("classifier",), ("attention", "query"),
                                 ("projections", "norm", "layer_embedding")), strict=True))  # scorer: what makes
# its layer weights (the query's attention); adapters: the layers' tokens
CASCADES = {"laya": _LAYA_CASCADE, "laya_joint": _LAYA_CASCADE, "laya_aligned": _LAYA_CASCADE,
            "alf": _ALF_CASCADE}  # head → steps


def reinitialise(part: nn.Module | nn.Parameter, seed: int) -> None:
    """Every sub-module's own `reset_parameters()` (PyTorch's default initialisation; `_reset_parameters()` for
    multi-head attention), or for a bare parameter (ALF's query and layer embedding) its head's N(0, 0.02²), drawn
    from `seed` without touching the global random state."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        if isinstance(part, nn.Parameter):
            with torch.no_grad():
                part.normal_(0.0, 0.02)
            return
        for sub in part.modules():
            if isinstance(sub, nn.MultiheadAttention):
                sub._reset_parameters()
            elif hasattr(sub, "reset_parameters"):
                sub.reset_parameters()


def cascade(head: LayerHead, seed: int = 0) -> Iterator[tuple[str, LayerHead]]:
    """(step, a copy of `head` with this and every earlier step's modules re-initialised), output layer first."""
    randomised = copy.deepcopy(head)
    for i, (step, attributes) in enumerate(CASCADES[head.name]):
        for attribute in attributes:
            reinitialise(getattr(randomised, attribute), seed * 1000 + i)
        yield step, copy.deepcopy(randomised).eval()


class PermutedLabels(FeatureStore):
    """The same store with the training split's labels permuted once (seeded); val and test keep theirs."""

    def __init__(self, store: FeatureStore, seed: int = 0):
        super().__init__(store.path, store.root)
        self.permuted = np.random.default_rng(seed).permutation(store.labels("train"))

    def read_block(self, split, start, stop, layers):
        feats, labels = super().read_block(split, start, stop, layers)
        return (feats, self.permuted[start:stop].astype(labels.dtype)) if split == "train" else (feats, labels)
