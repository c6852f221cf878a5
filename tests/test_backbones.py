"""Backbone building, training (incl. the frozen-body probe), safetensors round trip, bad configs."""

import json
from dataclasses import replace

import pytest
import torch

from conftest import TINY_BACKBONES, tiny_backbone
from laya.backbones import BackboneCard, BackboneConfig, build_model, create_backbone, load_backbone, save_backbone
from laya.core.config import ConfigError, from_dict
from laya.core.io import read_json, sha256_file
from laya.data import PreparedData


@pytest.mark.parametrize("arch", sorted(TINY_BACKBONES))
def test_build_gives_logits_for_each_arch(arch):
    model = build_model(TINY_BACKBONES[arch], 1, 28, 10, f"backbones.{arch}")
    assert model(torch.randn(2, 1, 28, 28)).shape == (2, 10)


def test_any_timm_model_by_name_without_a_hub():
    cfg = BackboneConfig(arch="timm", model={"name": "resnet10t"})
    model = build_model(cfg, 1, 28, 10, "backbones.res")
    assert model(torch.randn(2, 1, 28, 28)).shape == (2, 10)


@pytest.mark.parametrize("cfg, match", [
    (BackboneConfig(arch="mlp", model={"hiden": [4]}), r"backbones.x.model: unknown key\(s\) \['hiden'\]"),
    (BackboneConfig(arch="timm", model={"name": "no_such_net"}), "unknown timm model 'no_such_net'"),
    (BackboneConfig(arch="timm", model={"name": "resnet10t"}, weights="/nope.safetensors"),
     "backbones.x.weights: file /nope.safetensors not found"),
])
def test_bad_backbone_configs(cfg, match):
    with pytest.raises(ConfigError, match=match):
        build_model(cfg, 1, 28, 10, "backbones.x")


@pytest.mark.parametrize("values, match", [
    ({"arch": "transformer"}, r"backbones.x.arch: unknown value 'transformer'; valid: \['mlp', 'cnn', 'vit', 'timm'\]"),
    ({"arch": "mlp", "pretrained": True}, "backbones.x.pretrained: expected false unless arch is timm"),
    ({"arch": "timm"}, "backbones.x.model.name: expected a timm model name"),
    ({"arch": "mlp", "lr": -1}, "backbones.x.lr: expected a positive learning rate"),
    ({"arch": "mlp", "epoch": 3}, r"unknown key\(s\) \['epoch'\]"),
    ({"arch": "mlp", "schedule": "step"},
     r"backbones.x.schedule: unknown value 'step'; valid: \['constant', 'cosine'\]"),
])
def test_bad_backbone_params(values, match):
    with pytest.raises(ConfigError, match=match):
        from_dict(BackboneConfig, values, "backbones.x")


def test_training_learns_and_is_reproducible(prepared_path):
    data = PreparedData(prepared_path)
    cfg = replace(TINY_BACKBONES["mlp"], epochs=6, lr=1e-2, batch_size=16)
    runs = [create_backbone("mlp", cfg, data, torch.device("cpu"), "backbones.mlp") for _ in range(2)]
    (model_a, meta_a), (model_b, meta_b) = runs
    assert meta_a.test_accuracy > 0.5  # classes differ in brightness: well above chance (0.1)
    assert meta_a == meta_b  # the whole card: it holds nothing that varies from run to run
    for (name, a), (_, b) in zip(model_a.state_dict().items(), model_b.state_dict().items()):
        assert torch.equal(a, b), name


def test_cosine_schedule_with_dropout_trains_and_dropout_is_off_when_frozen(prepared_path):
    data = PreparedData(prepared_path)
    cfg = replace(TINY_BACKBONES["mlp"], model={"hidden": [32, 16, 8], "dropout": 0.5}, epochs=6, lr=1e-2,
                  batch_size=16, schedule="cosine", patience=6)
    model, meta = create_backbone("mlp", cfg, data, torch.device("cpu"), "backbones.mlp")
    assert meta.test_accuracy > 0.5
    x = torch.randn(4, 1, 28, 28)
    assert not model.training and torch.equal(model(x), model(x))  # frozen: dropout is the identity


def test_probe_mode_trains_only_the_classifier(prepared_path):
    data = PreparedData(prepared_path)
    cfg = replace(TINY_BACKBONES["cnn"], train=False, epochs=1, batch_size=32)
    torch.manual_seed(cfg.seed)
    reference = build_model(cfg, 1, 28, 10, "k").state_dict()
    model, _ = create_backbone("cnn", cfg, data, torch.device("cpu"), "backbones.cnn")
    changed = {k for k, v in model.state_dict().items() if not torch.equal(v, reference[k])}
    assert changed == {"head.weight", "head.bias"}


def test_save_load_roundtrip_gives_identical_outputs(tmp_path):
    path = tiny_backbone(tmp_path, "vit", "sha")
    model, meta = load_backbone(path)
    torch.manual_seed(0)
    fresh = build_model(TINY_BACKBONES["vit"], 1, 28, 10, "k").eval()
    x = torch.randn(3, 1, 28, 28)
    assert torch.equal(model(x), fresh(x))
    assert meta.weights_sha256 == read_json(path / "config.json")["weights_sha256"] == sha256_file(
        path / "model.safetensors")
    assert BackboneCard.load(path) == meta


def _recard(folder, **changes):
    """Rewrite a saved card with some fields changed (what a hand-edited or mismatched card looks like)."""
    replace(BackboneCard.load(folder), **changes).save(folder)


def test_weights_that_do_not_fit_are_a_clear_error(tmp_path):
    a = tiny_backbone(tmp_path / "a", "mlp", "sha")
    b = tiny_backbone(tmp_path / "b", "cnn", "sha")
    (a / "model.safetensors").write_bytes((b / "model.safetensors").read_bytes())
    _recard(a, weights_sha256=sha256_file(a / "model.safetensors"))  # a card that vouches for the wrong weights
    with pytest.raises(ConfigError, match=r"model.safetensors: weights do not fit the backbone.*rerun"):
        load_backbone(a)
    (a / "model.safetensors").write_bytes(b"\x00garbage")
    _recard(a, weights_sha256=sha256_file(a / "model.safetensors"))
    with pytest.raises(ConfigError, match="not a readable safetensors file"):
        load_backbone(a)


def test_weights_that_differ_from_their_card_are_refused(tmp_path):
    """Valid safetensors, right shapes, other values: the card's hash catches them (naming file and stage)."""
    from safetensors.torch import load_file, save_file

    path = tiny_backbone(tmp_path, "mlp", "sha")
    halved = {k: v * 0.5 for k, v in load_file(str(path / "model.safetensors")).items()}
    save_file(halved, str(path / "model.safetensors"))
    with pytest.raises(ConfigError, match=r"mlp/model.safetensors: SHA-256 .* differs from the .* recorded in "
                                          r".*config.json.*rerun `dvc repro backbone@mlp`"):
        load_backbone(path)


def test_a_card_of_another_kind_or_shape_is_refused_in_one_line(tmp_path):
    from laya.heads import build, save

    head = save(build("last", [4], num_classes=3), tmp_path / "head")
    assert head.KIND == "head"
    with pytest.raises(ConfigError, match=r"head/config.json: this is a head card, not a backbone card") as err:
        BackboneCard.load(tmp_path / "head")
    assert "\n" not in str(err.value)
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / "config.json").write_text(json.dumps({"kind": "backbone", "name": "x"}))
    with pytest.raises(ConfigError, match=r"odd/config.json: invalid backbone card"):
        BackboneCard.load(tmp_path / "odd")


def test_a_tiny_backbone_built_twice_is_byte_identical(tmp_path, prepared_path):
    data = PreparedData(prepared_path)
    cfg = replace(TINY_BACKBONES["mlp"], epochs=2, batch_size=32)
    for run in ("a", "b"):
        save_backbone(tmp_path / run, *create_backbone("mlp", cfg, data, torch.device("cpu"), "backbones.mlp"))
    files = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert files == ["config.json", "model.safetensors"]
    for name in files:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    assert "seconds" not in (tmp_path / "a" / "config.json").read_text()


@pytest.mark.parametrize("arch", ["mlp", "cnn"])
def test_forward_intermediates_equal_the_hooked_block_outputs(arch):
    torch.manual_seed(0)
    model = build_model(TINY_BACKBONES[arch], 1, 28, 10, f"backbones.{arch}").eval()
    hooked = []
    handles = [block.register_forward_hook(lambda _m, _i, out: hooked.append(out)) for block in model.blocks]
    x = torch.randn(5, 1, 28, 28)
    logits = model(x)
    for handle in handles:
        handle.remove()
    intermediates = model.forward_intermediates(x, intermediates_only=True)
    assert len(intermediates) == len(hooked) == len(model.blocks)
    for got, want in zip(intermediates, hooked):
        assert torch.equal(got, want)
    final, again = model.forward_intermediates(x, indices=[-1])
    assert torch.equal(model.head(final), logits) and torch.equal(again[0], hooked[-1])
    assert [f["module"] for f in model.feature_info] == [f"blocks.{i}" for i in range(len(model.blocks))]


@pytest.mark.parametrize("model, match", [
    ({"hidden": []}, r"backbones.mlp.model.hidden: expected a non-empty list of positive widths"),
    ({"hidden": [32, 0]}, r"backbones.mlp.model.hidden"),
    ({"hidden": [32], "dropout": 1.5}, r"backbones.mlp.model.dropout"),
])
def test_an_mlp_without_layers_is_refused_before_anything_is_built(model, match):
    with pytest.raises(ConfigError, match=match):
        from_dict(BackboneConfig, {"arch": "mlp", "model": model}, "backbones.mlp")


def test_pretrained_timm_weights_from_a_local_file_are_used_frozen(tmp_path, prepared_path):
    import timm
    from safetensors.torch import save_file

    torch.manual_seed(1)
    source = timm.create_model("resnet10t", pretrained=False)  # 3 channels, 1000 classes, like hub weights
    weights = tmp_path / "resnet10t.safetensors"
    save_file({k: v.contiguous() for k, v in source.state_dict().items()}, str(weights))
    cfg = BackboneConfig(arch="timm", model={"name": "resnet10t"}, pretrained=True, weights=str(weights),
                         train=False, epochs=1, batch_size=32)
    model, meta = create_backbone("res", cfg, PreparedData(prepared_path), torch.device("cpu"), "backbones.res")
    body = {k: v for k, v in model.state_dict().items() if not k.startswith("fc.")}
    for name, value in body.items():
        expected = source.state_dict()[name]
        if name == "conv1.0.weight":  # timm adapts the RGB stem to one channel by summing over channels
            expected = expected.sum(1, keepdim=True)
        assert torch.allclose(value, expected, atol=1e-6), name
    assert meta.mean != PreparedData(prepared_path).attrs["mean"]  # the model's own normalisation
