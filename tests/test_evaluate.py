"""Evaluation on heads whose answer is known: LOO, faithfulness, Deletion@1, ablation kinds, payload schema."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from conftest import write_feature_store
from laya import FeatureStore
from laya.core.config import ConfigError, from_dict
from laya.evaluate import (
    EvaluateConfig,
    ablation_values,
    build_method,
    deletion_at_1,
    deletion_auc,
    deletion_curve,
    faithfulness,
    leave_one_out,
    spearman_rows,
)
from laya.evaluate.explain import confidence_level, explanations, load_schema, validate
from laya.evaluate.scores import depth_patterns, evaluate_heads, metrics, summarise_seeds, timings
from laya.heads import LayerHead, build
from laya.storage.statistics import layer_means
from laya.train import HeadsConfig, TrainConfig, train_heads
from laya.trained import load_heads


class ReadsOneLayer(LayerHead):
    """logits = W h_k: depends on layer k only (so only ablating k changes anything); every layer stays in the
    graph with weight 0, as in real heads that read all layers."""

    name = "reads_one"

    def __init__(self, dims, k, weight):
        super().__init__(dims, weight.shape[0], {})
        self.k = k
        self.linear = nn.Linear(dims[k], weight.shape[0], bias=False)
        self.linear.weight.data = weight

    def forward(self, layers):
        return self.linear(layers[self.k]) + 0 * sum(t.sum(1, keepdim=True) for t in layers)


def test_loo_effects_of_a_head_that_reads_one_layer_equal_hand_values():
    weight = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    head = ReadsOneLayer([2, 2, 2], 1, weight)
    layers = [torch.randn(3, 2), torch.tensor([[2.0, 0.0], [0.0, 1.0], [1.0, 1.5]]), torch.randn(3, 2)]
    values = ablation_values("zero", [np.zeros(2)] * 3)
    loo = leave_one_out(head, layers, values)
    p = torch.softmax(layers[1], 1)
    expected_target = p.argmax(1)
    p_c = p.gather(1, expected_target[:, None])[:, 0]
    torch.testing.assert_close(loo.target, expected_target)
    torch.testing.assert_close(loo.effects[:, 1], p_c - 0.5)  # zero input → uniform over 2 classes
    torch.testing.assert_close(loo.effects[:, [0, 2]], torch.zeros(3, 2))


def test_mean_vs_zero_ablation():
    means = [np.array([1.0, -2.0]), np.array([3.0])]
    mean_values, zero_values = ablation_values("mean", means), ablation_values("zero", means)
    torch.testing.assert_close(mean_values[0], torch.tensor([1.0, -2.0]))
    torch.testing.assert_close(zero_values[1], torch.zeros(1))
    head = ReadsOneLayer([2, 1], 0, torch.tensor([[1.0, 0.0], [0.0, 1.0]]))
    layers = [torch.tensor([[0.0, 0.0]]), torch.tensor([[5.0]])]
    # zero ablation of layer 0 changes nothing here (it is zero already); mean ablation does
    assert float(leave_one_out(head, layers, zero_values).effects[0, 0]) == 0.0
    p_mean = torch.softmax(torch.tensor([1.0, -2.0]), 0)
    assert float(leave_one_out(head, layers, mean_values).effects[0, 0]) == pytest.approx(0.5 - float(p_mean[0]))
    with pytest.raises(ConfigError, match=r"evaluate.ablation: unknown value 'noise'"):
        from_dict(EvaluateConfig, {"ablation": "noise"}, "evaluate")


def test_spearman_with_ties_and_undefined_rows():
    from scipy.stats import spearmanr

    a = np.array([[1.0, 2.0, 2.0, 4.0], [3.0, 3.0, 3.0, 3.0], [4.0, 1.0, 2.0, 3.0]])
    b = np.array([[1.0, 1.0, 3.0, 2.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0]])
    rho = spearman_rows(a, b)
    assert rho[0] == pytest.approx(spearmanr(a[0], b[0]).statistic)
    assert np.isnan(rho[1])
    assert rho[2] == pytest.approx(spearmanr(a[2], b[2]).statistic)
    scores = faithfulness(a, b)
    assert scores["faithfulness_undefined"] == 1
    assert scores["faithfulness"] == pytest.approx((rho[0] + rho[2]) / 2)


def test_integrated_gradients_complete_and_converge_at_the_configured_steps():
    torch.manual_seed(0)
    head = build("laya", [6, 5, 4], 3).eval()  # softmax attention over layers: a smooth, non-linear integrand
    layers = [torch.randn(30, d) for d in (6, 5, 4)]
    values = ablation_values("zero", [np.zeros(d) for d in (6, 5, 4)])
    target = head(layers).argmax(1)
    few = build_method("ig", values, ig_steps=16)
    assert few.steps == 16
    attributions = few.attribute(head, layers, target)
    many = build_method("ig", values, ig_steps=128).attribute(head, layers, target)
    torch.testing.assert_close(attributions, many, rtol=1e-4, atol=1e-5)
    with torch.no_grad():
        gap = (head(layers) - head([v.expand_as(t) for v, t in zip(values, layers)])).gather(1, target[:, None])
    torch.testing.assert_close(attributions.sum(1), gap[:, 0], rtol=1e-4, atol=1e-4)  # completeness


def test_deletion_at_1_and_curve_by_hand():
    effects = np.array([[0.1, 0.5, 0.0], [0.3, 0.0, 0.2]])
    attribution = np.array([[0.2, 0.7, 0.1], [0.1, 0.1, 0.8]])
    assert deletion_at_1(attribution, effects) == pytest.approx((0.5 + 0.2) / 2)
    head = ReadsOneLayer([1, 1], 0, torch.tensor([[1.0], [-1.0]]))
    layers = [torch.tensor([[1.0]]), torch.tensor([[0.0]])]
    values = ablation_values("zero", [np.zeros(1), np.zeros(1)])
    target = torch.tensor([0])
    curve = deletion_curve(head, layers, values, torch.tensor([[0.9, 0.1]]), target)
    p0 = float(torch.softmax(torch.tensor([1.0, -1.0]), 0)[0])
    torch.testing.assert_close(curve, torch.tensor([[p0, 0.5, 0.5]]))
    assert deletion_auc(curve.numpy()) == pytest.approx((p0 + 0.5) / 2 * 0.5 + 0.5 * 0.5)


def test_oracle_and_one_layer_head_are_perfectly_faithful():
    head = ReadsOneLayer([2, 2, 2], 2, torch.eye(2) * 3)
    layers = [torch.randn(20, 2) for _ in range(3)]
    values = ablation_values("zero", [np.zeros(2)] * 3)
    loo = leave_one_out(head, layers, values)
    oracle = build_method("loo", values).attribute(head, layers, loo.target)
    torch.testing.assert_close(oracle, loo.effects)
    grads = build_method("grad_x_act", values).attribute(head, layers, loo.target)
    assert (grads[:, :2] == 0).all()  # layers 0 and 1 get no gradient
    with pytest.raises(ConfigError, match=r"unknown method 'shap'"):
        build_method("shap", values)


def test_metrics_over_seeds_are_means_with_stds():
    one = {"faithfulness": {"laya": {"ig": 0.8}}, "faithfulness_undefined": {"laya": {"ig": 1}},
           "deletion_at_1": {"laya": {"ig": 0.5}}, "ablated_accuracy": {"laya": {"b0": 0.9}}, "accuracy": {"laya": 1}}
    two = {"faithfulness": {"laya": {"ig": 0.6}}, "faithfulness_undefined": {"laya": {"ig": 2.0}},
           "deletion_at_1": {"laya": {"ig": 0.7}}, "ablated_accuracy": {"laya": {"b0": 0.8}}, "accuracy": {"laya": 0}}
    summary = summarise_seeds([one, two])
    assert summary["faithfulness"]["laya"]["ig"] == pytest.approx(0.7)
    assert summary["faithfulness_std"]["laya"]["ig"] == pytest.approx(np.std([0.8, 0.6], ddof=1), abs=1e-6)
    assert summary["faithfulness_undefined"]["laya"]["ig"] == 3  # counts add up, whatever their Python type
    assert summary["accuracy"]["laya"] == 0.5  # rates are means, even when they happen to be ints
    assert summary["ablated_accuracy"]["laya"]["b0"] == pytest.approx(0.85)
    assert summary["seeds"] == 2 and "accuracy_std" not in summary


def test_confidence_levels():
    assert [confidence_level(p, [0.6, 0.9]) for p in (0.3, 0.6, 0.89, 0.9)] == ["low", "medium", "medium", "high"]


@pytest.mark.parametrize("values, match", [
    ({"methods": {"ig": ["laya"], "lime": ["laya"]}}, r"evaluate.methods: unknown method\(s\) \['lime'\]"),
    ({"methods": ["ig"]}, r"evaluate.methods: expected a mapping"),
    ({"methods": {"ig": []}}, r"evaluate.methods.ig: expected a non-empty list of distinct head names"),
    ({"methods": {"ig": ["lstm"]}}, r"evaluate.methods.ig: unknown head\(s\) \['lstm'\]"),
    ({"methods": {"intrinsic": ["laya", "concat"]}}, r"evaluate.methods.intrinsic: head\(s\) \['concat'\] have no "
                                                     r"layer weights"),
    ({"methods": {"ig": ["laya"]}}, r"evaluate.explain: 'laya' must be among evaluate.methods.intrinsic"),
    ({"confidence": [0.9, 0.6]}, r"evaluate.confidence"),
    ({"ig_steps": 1}, r"evaluate.ig_steps: expected an integer ≥ 2"),
])
def test_bad_evaluate_params(values, match):
    with pytest.raises(ConfigError, match=match):
        from_dict(EvaluateConfig, values, "evaluate")


def test_pairs_follow_params_order():
    cfg = from_dict(EvaluateConfig, {"methods": {"ig": ["concat", "laya"], "intrinsic": ["laya"]}}, "evaluate")
    assert cfg.pairs == [("ig", "concat"), ("ig", "laya"), ("intrinsic", "laya")]
    assert cfg.heads == ["concat", "laya"]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("eval")
    store = FeatureStore.open(write_feature_store(tmp / "toy.zarr"))
    train_heads(store, HeadsConfig(names=["concat", "scalarmix", "laya", "alf", "probe"]),
                TrainConfig(seeds=[0], epochs=8, lr=0.01, batch_size=32), tmp / "heads")
    return store, tmp / "heads"


def _evaluate(trained, cfg, device="cpu"):
    store, heads_dir = trained
    heads, cards, layers = load_heads(heads_dir, cfg.heads, 0, store, "toy")
    return evaluate_heads(store, heads, layers, cfg, seed=0, device=device), cards


def store_rows(trained, split: str) -> int:
    return trained[0].num_samples(split)


def test_layer_means_are_chunkwise_exact(trained):
    store, _ = trained
    means = layer_means(store, "train", [0, 2])
    np.testing.assert_allclose(means[1], store.array("train", "layers/layer2")[:].astype(np.float64).mean(0))


def test_evaluate_on_a_tiny_cache_finds_the_informative_layer(trained):
    cfg = EvaluateConfig(batch_size=50, max_samples=100)
    ev, cards = _evaluate(trained, cfg)
    scores, times = metrics(ev), timings(ev)
    laya = scores["faithfulness"]["laya"]
    assert len(ev.labels) == 100
    assert laya["loo"] == pytest.approx(1.0)
    assert laya["intrinsic"] > laya["random"]
    assert scores["deletion_at_1"]["laya"]["intrinsic"] > scores["deletion_at_1"]["laya"]["random"] + 0.2
    assert set(scores["faithfulness"]["scalarmix"]) == {"intrinsic"}
    assert scores["ablated_accuracy"]["laya"]["layer1"] < scores["accuracy"]["laya"] - 0.3
    assert set(scores["alpha_entropy"]) == {"laya", "scalarmix", "alf"}
    alf = scores["faithfulness"]["alf"]  # ALF's attention over the layers, scored like α
    assert set(alf) == {"intrinsic", "lrp", "lrp_delta", "probe"} and alf["lrp_delta"] > laya["random"]
    agreement = scores["probe_agreement"]  # each method against the per-layer probes' p_c, per explained head
    assert set(agreement) == {"laya", "alf"} and "probe" not in agreement["laya"]
    assert agreement["laya"]["loo"] == pytest.approx(laya["probe"], abs=1e-6)  # agreement with LOO = faithfulness
    assert all(-1 <= v <= 1 for methods in agreement.values() for v in methods.values())
    assert "ms_per_explanation" not in scores  # wall-clock: not in the DVC metrics
    assert times["ms_per_explanation"]["laya"]["ig"] > times["ms_per_explanation"]["laya"]["intrinsic"]
    failure = scores["failure_detection"]
    assert failure["head"] == "laya" and failure["test_errors"] == int((ev.probs["laya"].argmax(1) != ev.labels).sum())
    assert len(ev.val.labels) == store_rows(trained, "val") and ev.val.alpha.shape[1] == 3
    patterns = depth_patterns(ev, "laya", shift_resamples=99)
    assert int(np.argmax(patterns["alpha_mean"])) == 1 and patterns["alpha_head"] == "laya"
    assert len(patterns["alpha_shift_by_class"]) == 3
    assert len(patterns["alpha_by_class"]) == 3 and len(patterns["agreement"]["spearman"]) == len(cfg.pairs)
    assert "ig@laya" in patterns["deletion_curves"]
    payloads = explanations(ev, "toy", cards["laya"], "toy", "mean", 10, [0.6, 0.9])
    assert len(payloads) == 10
    schema = load_schema()
    for payload in payloads:
        validate(payload, schema)
        assert payload["standard"] == "WIA-AI-009" and set(payload["explanation"]["attention_weights"]) == {
            "layer0", "layer1", "layer2"}
    assert payloads[0]["model_info"]["model_id"] == "laya-toy-seed0"
    broken = {**payloads[0], "prediction": {**payloads[0]["prediction"], "confidence": "very high"}}
    import jsonschema

    with pytest.raises(jsonschema.ValidationError):
        validate(broken, schema)


@pytest.mark.parametrize("head_name", ["concat", "laya"])
def test_post_hoc_methods_explain_any_head_and_ig_is_complete(trained, head_name):
    """IG on Concat (or LAYA): Σ_i attribution_i = f_c(x) − f_c(baseline) (Captum's completeness axiom) for the
    function IG explains, the predicted class's logit, with the ablation values as baseline; within 5%."""
    store, heads_dir = trained
    cfg = from_dict(EvaluateConfig, {"methods": {"ig": [head_name], "loo": [head_name]}, "explain": None,
                                     "batch_size": 40, "max_samples": 40}, "evaluate")
    ev, _ = _evaluate(trained, cfg)
    assert metrics(ev)["faithfulness"][head_name]["loo"] == pytest.approx(1.0)
    head = load_heads(heads_dir, [head_name], 0, store, "toy")[0][head_name]
    feats, _ = next(store.batches("test", 40, layers=[0, 1, 2]))
    values = ablation_values("mean", layer_means(store, "train", [0, 1, 2]))
    with torch.no_grad():
        logits, base = head(feats), head([v.expand_as(f) for v, f in zip(values, feats)])
    target = logits.argmax(1)
    gap = (logits - base).gather(1, target[:, None])[:, 0].numpy()
    total = ev.attributions[("ig", head_name)].sum(1)
    np.testing.assert_allclose(total, gap, rtol=0.05, atol=0.05 * np.abs(gap).mean())


def test_evaluate_on_device_cpu_equals_auto(trained):
    from laya.core.device import resolve_device

    cfg = EvaluateConfig(batch_size=50, max_samples=60)
    on_cpu, _ = _evaluate(trained, cfg, device=resolve_device("cpu"))
    auto, _ = _evaluate(trained, cfg, device=resolve_device("auto"))
    if resolve_device("auto").type == "cpu":
        assert metrics(on_cpu) == metrics(auto)
    else:  # a GPU: the same results within float tolerance
        for group in ("faithfulness", "deletion_at_1"):
            for head, methods in metrics(on_cpu)[group].items():
                for method, value in methods.items():
                    assert metrics(auto)[group][head][method] == pytest.approx(value, abs=0.02), (group, method)


def test_a_head_missing_for_a_seed_is_one_line_with_the_fix(trained):
    store, heads_dir = trained
    with pytest.raises(ConfigError, match=r"no last head trained with seed 0.*dvc repro train@toy"):
        load_heads(heads_dir, ["last"], 0, store, "toy")


def test_the_probe_method_is_each_layer_s_own_probe_p_c(trained):
    """R_i = softmax(W_i h_i + b_i)_c for the explained head's class c; it reads the probes, not the head."""
    from laya.evaluate.methods import build_method

    store, heads_dir = trained
    heads, _, layers = load_heads(heads_dir, ["laya", "probe"], 0, store, "toy")
    feats, _ = next(store.batches("test", 20, layers=layers))
    target = heads["laya"](feats).argmax(1)
    got = build_method("probe", [], probes=heads["probe"]).attribute(heads["laya"], feats, target)
    for i, (probe, h) in enumerate(zip(heads["probe"].probes, feats)):
        torch.testing.assert_close(got[:, i], torch.softmax(probe(h), -1)[torch.arange(20), target])
    with pytest.raises(ConfigError, match="no trained `probe` head for this seed; add probe to heads.names"):
        build_method("probe", [])
