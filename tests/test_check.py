"""The whole-params check: every section typed, unknown sections and dangling references refused in one line."""

import copy
import subprocess
import sys

import pytest
import yaml

from conftest import REPO
from laya.check import check_params
from laya.config import ConfigError
from laya.params import load_params

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
    ({"backbones.mlp.model.hidden": []}, r"backbones.mlp.model.hidden: expected a non-empty list of positive widths"),
    ({"backbones.cnn.model.channels": [16, -1]}, r"backbones.cnn.model.channels"),
    ({"backbones.vit.model.num_heads": 3}, r"backbones.vit.model.embed_dim: expected a multiple of num_heads"),
    ({"train.overrides.resnet": {"lr": 0.1}}, r"train.overrides: \['resnet'\] not in params `backbones`"),
    ({"heads.extra.resnet": ["laya_aligned"]}, r"heads.extra: \['resnet'\] not in params `backbones`"),
    ({"heads.extra.mlp": ["laya"]}, r"heads.extra.mlp: \['laya'\] are already in heads.names"),
    ({"heads.extra.mlp": ["laya_joint"]}, r"heads.extra.mlp: \['laya_joint'\] are trained together with"),
    ({"evaluate.cross_ablation": ["concat"]}, r"evaluate.cross_ablation: \['concat'\] are explained by no method"),
    ({"heads.laya_aligned.align_temperature": 0}, r"heads.laya_aligned.align_temperature: expected a positive"),
    ({"clt.backbone": "vitt"}, r"clt.backbone: 'vitt' is not in params `backbones`"),
    ({"clt.compare": ["vit_tranfser"]}, r"clt.compare: \['vit_tranfser'\] are not in params `backbones`"),
    ({"clt.compare": ["vit"]}, r"clt.compare: expected distinct backbones other than clt.backbone \(vit\)"),
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
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(_with({"backbones.mlp.model.hidden": []})))
    done = subprocess.run([sys.executable, "pipeline/check.py", "--params", str(tmp_path / "params.yaml")],
                          cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "backbones.mlp.model.hidden" in done.stderr
