"""Sanity checks for layer attributions: the randomisation destroys what it claims, and only that."""

import numpy as np
import pytest
import torch

from conftest import write_feature_store
from laya.core.config import ConfigError, from_dict
from laya.evaluate import EvaluateConfig
from laya.heads import build
from laya.sanity import STEPS, PermutedLabels, cascade, check_head, similarity
from laya.storage.statistics import layer_means
from laya.storage.store import FeatureStore
from laya.train import TrainConfig

DIMS = [6, 5, 4]
PARTS = {"classifier": ("classifier",), "scorer": ("scorer",), "adapters": ("adapters",)}


def _state(head, part):
    return [p.detach().clone() for p in getattr(head, part).parameters()]


def _same(a, b):
    return all(torch.equal(x, y) for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize("name", ["laya", "laya_aligned"])
def test_each_cascade_step_reinitialises_its_part_and_every_earlier_one_and_nothing_else(name):
    torch.manual_seed(0)
    head = build(name, DIMS, 3, psi="mlp")
    before = {part: _state(head, part) for part in ("classifier", "scorer", "psi", "adapters")}
    steps = list(cascade(head, seed=0))
    assert [s for s, _ in steps] == list(STEPS) == ["classifier", "scorer", "adapters"]
    for i, (step, randomised) in enumerate(steps):
        destroyed = {p for s in STEPS[:i + 1] for p in PARTS[s]} | ({"psi"} if i >= 1 else set())
        for part in ("classifier", "scorer", "psi", "adapters"):
            changed = not _same(before[part], _state(randomised, part))
            assert changed == (part in destroyed), (step, part)
    assert all(_same(before[p], _state(head, p)) for p in before)  # the trained head is untouched


def test_alf_s_cascade_destroys_the_classifier_then_its_attention_then_the_layer_tokens():
    """Every parameter of the ALF head belongs to exactly one step; its attention ignores the classifier too."""
    torch.manual_seed(0)
    head = build("alf", DIMS, 3).eval()
    with torch.no_grad():
        for parameter in head.parameters():  # as if trained: no parameter left at its initial value
            parameter.add_(torch.randn_like(parameter) * 0.1)
    parts = {"classifier": ["classifier"], "scorer": ["attention", "query"],
             "adapters": ["projections", "norm", "layer_embedding"]}
    assert {n.split(".")[0] for n, _ in head.named_parameters()} == {p for ps in parts.values() for p in ps}

    def state(module, name):
        part = getattr(module, name)
        return [part.detach().clone()] if isinstance(part, torch.nn.Parameter) else _state(module, name)

    before = {p: state(head, p) for ps in parts.values() for p in ps}
    layers = [torch.randn(64, d) for d in DIMS]
    for i, (step, randomised) in enumerate(cascade(head, seed=0)):
        destroyed = {p for s in STEPS[:i + 1] for p in parts[s]}
        for name in before:
            assert (not _same(before[name], state(randomised, name))) == (name in destroyed), (step, name)
        if step == "classifier":
            assert torch.equal(head.layer_weights(layers), randomised.layer_weights(layers))
        else:
            assert not torch.allclose(head.layer_weights(layers), randomised.layer_weights(layers))


def test_alpha_ignores_the_classifier_and_loo_does_not():
    torch.manual_seed(0)
    head = build("laya", DIMS, 3).eval()
    layers = [torch.randn(64, d) for d in DIMS]
    (_, no_classifier), (_, no_scorer), _ = cascade(head)
    assert torch.equal(head.layer_weights(layers), no_classifier.layer_weights(layers))  # by construction
    assert not torch.allclose(head.layer_weights(layers), no_scorer.layer_weights(layers))
    assert not torch.allclose(head(layers), no_classifier(layers))


def test_permuted_labels_shuffle_the_training_split_only(tmp_path):
    store = FeatureStore.open(write_feature_store(tmp_path / "toy.zarr"))
    permuted = PermutedLabels(store, seed=0)
    real = np.concatenate([y.numpy() for _, y in store.batches("train", 50)])
    shuffled = np.concatenate([y.numpy() for _, y in permuted.batches("train", 50)])
    assert sorted(shuffled) == sorted(real) and (shuffled != real).mean() > 0.3
    for split in ("val", "test"):
        assert np.array_equal(np.concatenate([y.numpy() for _, y in permuted.batches(split, 50)]),
                              store.labels(split))


def test_similarity_is_the_mean_row_spearman_and_counts_constant_rows():
    a = np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0], [1.0, 1.0, 1.0]])
    assert similarity(a, a) == (1.0, 1)
    assert similarity(a, a[:, ::-1]) == (-1.0, 1)


def test_check_head_reports_every_method_step_and_the_random_label_head(tmp_path):
    store = FeatureStore.open(write_feature_store(tmp_path / "toy.zarr"))
    torch.manual_seed(0)
    head = build("laya", store.dims, len(store.info.classes))
    evaluate = from_dict(EvaluateConfig, {"ablation": "mean", "sanity": {
        "max_samples": 40, "label_epochs": 1, "methods": ["intrinsic", "grad_x_act", "loo"]}}, "e")
    means = layer_means(store, "train", [0, 1, 2])
    out = check_head(head, store, [0, 1, 2], means, TrainConfig(batch_size=32), evaluate)
    assert out.samples == 40 and set(out.accuracy) == {"trained", *STEPS, "random_labels"}
    assert out.model_randomisation["intrinsic"]["classifier"] == 1.0  # α never reads the classifier
    assert out.model_randomisation["loo"]["classifier"] < 1.0
    assert all(list(steps) == list(STEPS) for steps in out.model_randomisation.values())  # cascade order
    assert out.model_randomisation["intrinsic"]["scorer"] < 1.0  # α is the scorer's output
    assert set(out.data_randomisation) == {"intrinsic", "grad_x_act", "loo"}


@pytest.mark.parametrize("sanity, match", [
    ({"heads": ["concat"]}, r"evaluate.sanity.heads: \['concat'\] have no randomisation cascade"),
    ({"methods": ["random"]}, r"evaluate.sanity.methods: \['random'\] cannot be checked"),
    ({"max_samples": 0}, r"evaluate.sanity.max_samples: expected a positive integer"),
    ({"label_epochs": 0}, r"evaluate.sanity.label_epochs"),
    ({"samples": 5}, r"evaluate.sanity: unknown key\(s\) \['samples'\]"),
])
def test_bad_sanity_params_name_the_key(sanity, match):
    with pytest.raises(ConfigError, match=match):
        from_dict(EvaluateConfig, {"sanity": sanity}, "evaluate")
