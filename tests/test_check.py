"""The whole-params check: every section typed, unknown sections and dangling references refused in one line."""

import copy
import subprocess
import sys

import pytest
import yaml

from conftest import REPO
from laya.check import check_params
from laya.core.config import ConfigError
from laya.core.params import load_params

PARAMS = load_params(REPO / "params.yaml")


def _with(change: dict) -> dict:
    params = copy.deepcopy(PARAMS)
    for dotted, value in change.items():
        *parents, last = dotted.split(".")
        node = params
        for key in parents:
            node = node.setdefault(key, {})
        node[last] = value
    return params


def test_the_committed_params_are_valid():
    assert "clt_frontier" in check_params(PARAMS)


def test_an_unknown_top_level_section_is_refused_naming_it(tmp_path):
    (tmp_path / "params.yaml").write_text(yaml.safe_dump({**PARAMS, "trian": {"epochs": 3}}))
    with pytest.raises(ConfigError, match=r"params.yaml: unknown top-level section\(s\) \['trian'\]; valid: "
                                          r"\['device', 'workers', 'storage', 'data'"):
        load_params(tmp_path / "params.yaml")


@pytest.mark.parametrize("change, match", [
    ({"backbones.mlp.backbone.model.hidden": []},
     r"backbones.mlp.backbone.model.hidden: expected a non-empty list of positive widths"),
    ({"backbones.cnn.backbone.model.channels": [16, -1]}, r"backbones.cnn.backbone.model.channels"),
    ({"backbones.vit.backbone.model.num_heads": 3}, r"backbones.vit.backbone.model.embed_dim: expected a multiple of"),
    ({"backbones.mlp.train": {"lr": -1}}, r"backbones.mlp.train.lr: expected a positive number"),
    ({"backbones.mlp.train": {"tau": 1}}, r"backbones.mlp.train: unknown key\(s\) \['tau'\]"),
    ({"backbones.mlp.heads": ["laya"]}, r"backbones.mlp.heads: \['laya'\] are already in heads.names"),
    ({"backbones.mlp.heads": ["laya_joint"]}, r"backbones.mlp.heads: \['laya_joint'\] are trained together with"),
    ({"backbones.mlp.heads": ["lstm"]}, r"backbones.mlp.heads: unknown head\(s\) \['lstm'\]"),
    ({"backbones.mlp.dpeth": True}, r"backbones.mlp: unknown key\(s\) \['dpeth'\]"),
    ({"backbones.mlp_joint.depth": True}, r"backbones.mlp_joint.depth: expected false for protocol joint"),
    ({"backbones.vit.clt_compare": True}, r"backbones.vit.clt_compare: expected false for clt.backbone"),
    ({"heads.extra": {"mlp": ["laya_aligned"]}}, r"heads: unknown key\(s\) \['extra'\]; valid: \['names', 'layers'\]"),
    ({"train.overrides": {"mlp": {"lr": 0.1}}}, r"train: unknown key\(s\) \['overrides'\]"),
    ({"depth.head": "concat"}, r"depth.head: 'concat' has no layer weights of its own"),
    ({"depth.seed": 7}, r"depth.seed: 7 is not among the train seeds of mlp \[0, 1, 2\]"),
    ({"evaluate.cross_ablation": ["concat"]}, r"evaluate.cross_ablation: \['concat'\] are explained by no method"),
    ({"heads.laya_aligned.align_temperature": 0}, r"heads.laya_aligned.align_temperature: expected a positive"),
    ({"clt.backbone": "vitt"}, r"clt.backbone: 'vitt' is not in params `backbones`"),
    ({"clt.compare": ["vit_transfer"]}, r"clt: unknown key\(s\) \['compare'\]"),
    ({"clt_frontier.baselines": {"sea": ["relu_topk"]}}, r"clt_frontier.baselines: unknown per-layer model 'sea'"),
    ({"evaluate.spatial.fraction": 0}, r"evaluate.spatial.fraction: expected a share in \(0, 1\)"),
    ({"device": "gpu"}, r"device: expected auto, cpu, cuda or cuda:<index>, got 'gpu'"),
    ({"heads.laya.tau": "abc"}, r"heads.laya.tau: expected a number, got 'abc'"),
    ({"evaluate.methods.ig": ["lstm"]}, r"evaluate.methods.ig: unknown head\(s\) \['lstm'\]"),
    ({"extract.codec": "gzip"}, r"extract.codec: unknown value 'gzip'"),
    ({"clt_frontier.ks": [4, 1024]}, r"clt_frontier.ks: \[1024\] exceed clt.dict_size \(512\)"),
])
def test_a_bad_value_anywhere_names_its_key(change, match):
    with pytest.raises(ConfigError, match=match):
        check_params(_with(change))


def test_a_device_this_machine_lacks_is_refused_before_any_stage_runs():
    """Refused by `check`, not by the first stage that builds a tensor (after DVC deleted that stage's outputs)."""
    with pytest.raises(ConfigError, match=r"extract.autocast: 'bf16' needs a CUDA device, but the stage runs on cpu"):
        check_params(_with({"device": "cpu", "extract.autocast": "bf16"}))
    import torch

    count = torch.cuda.device_count()
    missing = "cuda" if count == 0 else f"cuda:{count}"
    expected = "CUDA is not available" if count == 0 else f"this machine has {count} CUDA device"
    with pytest.raises(ConfigError, match=rf"device: '{missing}' requested but {expected}"):
        check_params(_with({"device": missing}))


def test_the_stage_prints_one_line(tmp_path):
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(_with({"backbones.mlp.backbone.model.hidden": []})))
    done = subprocess.run([sys.executable, "pipeline/check.py", "--params", str(tmp_path / "params.yaml")],
                          cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "backbones.mlp.backbone.model.hidden" in done.stderr


def test_an_entry_missing_a_key_dvc_tracks_names_it_and_the_fix():
    params = copy.deepcopy(PARAMS)
    del params["backbones"]["cnn"]["depth"], params["backbones"]["cnn"]["heads"]
    with pytest.raises(ConfigError, match=r"backbones.cnn: missing key\(s\) \['heads', 'depth'\]; every entry lists "
                                          r"\['backbone', 'heads', 'train', 'depth', 'clt_compare'\] \(dvc.yaml tracks "
                                          r"each as a stage param\), e.g. heads: \[\], depth: false."):
        check_params(params)


def test_replacing_the_backbones_is_one_section():
    """A user's own entries in place of the default ones pass the check with nothing else edited (clt.backbone
    names the transcoder's ViT, so the new ViT takes that name)."""
    mine = {"backbone": {"arch": "timm", "model": {"name": "resnet18"}, "train": False}, "heads": [], "train": {},
            "depth": True, "clt_compare": False}
    vit = {**mine, "backbone": {"arch": "vit"}, "depth": False}
    params = {**copy.deepcopy(PARAMS), "backbones": {"resnet": mine, "vit": vit}}
    assert "backbones" in check_params(params)
