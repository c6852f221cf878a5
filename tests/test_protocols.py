"""The joint protocol: backbone and LAYA head trained as one model; once frozen, the co-trained head gives the
same logits and α on the backbone's cached activations as the joint model gives on the images."""

import numpy as np
import pytest
import torch

from conftest import TINY_BACKBONES, tiny_card
from laya import FeatureStore
from laya.backbones import load_backbone, save_backbone
from laya.backbones.build import build_model
from laya.config import ConfigError, from_dict
from laya.data import PreparedData
from laya.extract import ExtractConfig, extract_features
from laya.heads import build
from laya.protocols import JointConfig, JointModel, fit_joint


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
