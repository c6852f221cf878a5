"""The joint protocol: backbone and LAYA head trained as one model; once frozen, the co-trained head gives the
same logits and α on the backbone's cached activations as the joint model gives on the images."""

import numpy as np
import pytest
import torch

from conftest import TINY_BACKBONES, tiny_card
from laya import FeatureStore
from laya.backbones import load_backbone, save_backbone
from laya.backbones.build import build_model
from laya.backbones.config import JointConfig
from laya.core.config import ConfigError, from_dict
from laya.data import PreparedData
from laya.extract import ExtractConfig, extract_features
from laya.heads import build
from laya.protocols.joint import JointModel, fit_joint


@pytest.mark.parametrize("arch", ["mlp", "vit"])
def test_the_co_trained_head_explains_the_cache_as_it_explained_the_images(tmp_path, prepared_path, arch):
    data = PreparedData(prepared_path)
    torch.manual_seed(0)
    backbone = build_model(TINY_BACKBONES[arch], 1, 28, 10, f"backbones.{arch}")
    card = tiny_card(arch, data.attrs["data_sha256"])
    prep = card.preprocess()
    probe = JointModel(backbone, torch.nn.Identity())
    dims = [int(t.shape[1]) for t in probe.layers(prep(torch.from_numpy(data.images("train", 0, 2))))]
    model = JointModel(backbone, build("laya", dims, 10, d_star=8, scorer_hidden=16))
    splits = {s: (data.images(s), data.labels(s)) for s in ("train", "val")}
    before = [p.detach().clone() for p in backbone.parameters()]
    fit = fit_joint(model, prep, splits, JointConfig(epochs=3, patience=2, batch_size=32), desc=arch)
    assert fit["best_epoch"] >= 1 and fit["val_accuracy"] == max(h["val_accuracy"] for h in fit["history"])
    assert any(not torch.equal(a, b) for a, b in zip(before, backbone.parameters()))  # the backbone trained too

    _, frozen = load_backbone(save_backbone(tmp_path / "bb", backbone, card))  # its card, with the weights' hash
    out = tmp_path / "features.zarr"
    extract_features(backbone, frozen, data, out, ExtractConfig(batch_size=64, shard_size=64, mlp_io=False),
                     torch.device("cpu"))
    store = FeatureStore.open(out)
    assert store.layers == model.layer_names
    cached, _ = store.read_block("test", 0, store.num_samples("test"), list(range(len(dims))))
    cached = [torch.from_numpy(np.asarray(c, dtype=np.float32)) for c in cached]
    images = prep(torch.from_numpy(data.images("test")))
    with torch.no_grad():
        live_logits, live_alpha = model(images), model.head.layer_weights(model.layers(images))
        cache_logits, cache_alpha = model.head(cached), model.head.layer_weights(cached)
    assert torch.allclose(cache_alpha, live_alpha, atol=5e-3), (cache_alpha - live_alpha).abs().max()
    assert torch.allclose(cache_logits, live_logits, atol=2e-2, rtol=1e-2), (cache_logits - live_logits).abs().max()
    assert (cache_logits.argmax(1) == live_logits.argmax(1)).float().mean() > 0.98


def test_joint_config_refuses_bad_values():
    with pytest.raises(ConfigError, match=r"joint.patience: expected an integer ≥ 1, got 0"):
        from_dict(JointConfig, {"patience": 0}, "joint")


def test_transfer_splits_classes_exactly(prepared_path):
    from laya.backbones import BackboneConfig
    from laya.protocols import backbone_data, head_data

    data = PreparedData(prepared_path)
    cfg = from_dict(BackboneConfig, {"arch": "mlp", "protocol": "transfer", "pretrain_classes": [3, 0, 1, 2, 4]},
                    "backbones.t")
    pre, rest = backbone_data(cfg, data, "backbones.t"), head_data(cfg, data, "backbones.t")
    assert pre.classes == data.classes[:5] and rest.classes == data.classes[5:]
    for split in ("train", "val", "test"):
        original = data.labels(split)
        seen_by_backbone = set(original[pre.rows(split)])
        assert seen_by_backbone == {0, 1, 2, 3, 4}
        assert not seen_by_backbone & set(original[rest.rows(split)])  # no head class in backbone training
        assert pre.num_samples(split) + rest.num_samples(split) == data.num_samples(split)
        assert np.array_equal(rest.labels(split), original[rest.rows(split)] - 5)  # renumbered 0..K-1
        assert np.array_equal(rest.images(split, 2, 5), data.images(split)[rest.rows(split)[2:5]])
        assert np.array_equal(rest.index(split), data.index(split)[rest.rows(split)])


@pytest.mark.parametrize("values, message", [
    ({"protocol": "frozn"}, r"backbones.b.protocol: unknown value 'frozn'; valid: \['frozen', 'joint', 'transfer'\]"),
    ({"protocol": "transfer"}, r"backbones.b.pretrain_classes: expected a non-empty list"),
    ({"protocol": "transfer", "pretrain_classes": []}, r"backbones.b.pretrain_classes: expected a non-empty list"),
    ({"protocol": "transfer", "pretrain_classes": [1, 1]}, r"backbones.b.pretrain_classes: expected distinct"),
    ({"pretrain_classes": [0, 1]}, r"backbones.b.pretrain_classes: expected null unless protocol is transfer"),
    ({"joint": {"epochs": 2}}, r"backbones.b.joint: expected no joint recipe unless protocol is joint"),
    ({"protocol": "joint", "joint": {"seeds": []}}, r"backbones.b.joint.seeds: expected a non-empty list"),
    ({"protocol": "joint", "joint": {"head": {"tau": 0}}}, r"backbones.b.joint.head.tau: expected a positive"),
])
def test_protocol_params_refuse_bad_values(values, message):
    from laya.backbones import BackboneConfig

    with pytest.raises(ConfigError, match=message):
        from_dict(BackboneConfig, {"arch": "mlp", **values}, "backbones.b")


@pytest.mark.parametrize("classes, message", [
    ([0, 12], r"backbones.t.pretrain_classes: \[12\] not in the dataset's 10 classes"),
    (list(range(10)), r"leaves 0 of 10 classes for the heads"),
])
def test_transfer_classes_must_leave_classes_in_the_dataset(classes, message):
    from laya.protocols import transfer_classes

    with pytest.raises(ConfigError, match=message):
        transfer_classes(classes, [f"c{i}" for i in range(10)], "backbones.t")


def test_joint_heads_are_not_trained_from_a_cache():
    from laya.train import HeadsConfig

    with pytest.raises(ConfigError, match=r"heads.names: \['laya_joint'\] are trained together with their backbone"):
        HeadsConfig.parse({"names": ["laya", "laya_joint"]})
