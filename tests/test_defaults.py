"""One source per default: every knob params.yaml sets equals its typed config's default.

A stage run by hand on a params file without a key then reads the value `dvc repro` reads with params.yaml.
"""

import dataclasses

import pytest
import yaml

from conftest import REPO
from laya.clt.config import CLTConfig, FrontierConfig
from laya.core.config import from_dict
from laya.data.config import DataConfig
from laya.depth import DepthConfig
from laya.evaluate.config import EvaluateConfig, SanityConfig
from laya.extract.config import ExtractConfig
from laya.heads import JOINT_HEAD
from laya.spatial.config import SpatialConfig
from laya.train.config import HeadsConfig, TrainConfig

PARAMS = yaml.safe_load((REPO / "params.yaml").read_text())
GLOBAL_SECTIONS = {"data": DataConfig, "extract": ExtractConfig, "train": TrainConfig, "evaluate": EvaluateConfig,
                   "depth": DepthConfig, "clt": CLTConfig, "clt_frontier": FrontierConfig}
NESTED = {"evaluate.sanity": SanityConfig, "evaluate.spatial": SpatialConfig}
# keys that also name heads only some backbones train (the joint protocol's, an entry's own): equal to the code
# default once those heads are taken out
PER_BACKBONE_HEADS = {JOINT_HEAD, *(h for entry in PARAMS["backbones"].values() for h in entry["heads"])}
NAMES_HEADS = {"evaluate.methods", "evaluate.cross_ablation"}


def _common_heads(value):
    """`value` (method → heads, or a list of heads) without the heads only some backbones train."""
    if isinstance(value, dict):
        kept = {method: _common_heads(heads) for method, heads in value.items()}
        return {method: heads for method, heads in kept.items() if heads}
    return [head for head in value if head not in PER_BACKBONE_HEADS]


def _values(params: dict, dotted: str) -> dict:
    node = params
    for part in dotted.split("."):
        node = node[part]
    return node or {}


def _disagreements(cls, values: dict, key: str) -> list[str]:
    coded, given = from_dict(cls, {}, key), from_dict(cls, values, key)
    found = []
    for f in dataclasses.fields(cls):
        name = f"{key}.{f.name}"
        if f.name not in values or name in NESTED:
            continue
        code, param = getattr(coded, f.name), getattr(given, f.name)
        if name in NAMES_HEADS:
            param = _common_heads(param)
        if code != param:
            found.append(f"{name}: code default {code!r}, params.yaml {param!r}")
    return found


@pytest.mark.parametrize("key", sorted({**GLOBAL_SECTIONS, **NESTED}))
def test_params_yaml_sets_each_knob_to_its_code_default(key):
    cls = {**GLOBAL_SECTIONS, **NESTED}[key]
    assert _disagreements(cls, _values(PARAMS, key), key) == []


def test_every_head_section_equals_its_config_default():
    given, coded = HeadsConfig.parse(PARAMS["heads"]), HeadsConfig.parse({})
    assert (given.names, given.layers) == (coded.names, coded.layers)
    assert {name: given.config(name) for name in given.configs} == {name: coded.config(name)
                                                                     for name in given.configs}


def test_the_check_finds_a_disagreement():
    """The comparison itself can fail: a params file with another patience is reported by key."""
    assert _disagreements(TrainConfig, {**PARAMS["train"], "patience": 7}, "train") == [
        f"train.patience: code default {TrainConfig().patience!r}, params.yaml 7"]


def test_params_yaml_names_every_knob_of_the_global_sections():
    """params.yaml is the full list of knobs: a key only in code would be invisible to `dvc exp run -S`."""
    missing = [f"{key}.{f.name}" for key, cls in {**GLOBAL_SECTIONS, **NESTED}.items()
               for f in dataclasses.fields(cls) if f.name not in _values(PARAMS, key)]
    assert missing == []
