"""The params snippets of the README and the guide pass `check` as printed: a user who copies one gets a pipeline
DVC can run."""

import copy
import re

import pytest
import yaml

from conftest import REPO
from laya.check import check_params
from laya.core.params import load_params

PARAMS = load_params(REPO / "params.yaml")
PAGES = [REPO / "README.md", *sorted((REPO / "docs" / "guide").glob("*.md"))]
BLOCKS = [yaml.safe_load(block) for page in PAGES for block in re.findall(r"```yaml\n(.*?)```", page.read_text(), re.S)]
WITH_BACKBONES = [block for block in BLOCKS if isinstance(block, dict) and "backbones" in block]


def _merged(base: dict, changes: dict) -> dict:
    for key, value in changes.items():
        base[key] = _merged(base.get(key) or {}, value) if isinstance(value, dict) else value
    return base


def test_the_pages_have_entry_snippets():
    assert len(WITH_BACKBONES) >= 4


@pytest.mark.parametrize("block", WITH_BACKBONES, ids=lambda b: "+".join(b["backbones"]))
def test_a_snippet_s_entries_added_to_the_default_ones_pass_check(block):
    params = copy.deepcopy(PARAMS)
    params["backbones"].update(copy.deepcopy(block["backbones"]))
    check_params(params)


def test_the_own_model_recipe_replaces_the_backbones_and_passes_check():
    """`backbones` replaced, every other section merged key by key: nothing else names a removed backbone."""
    recipe = next(block for block in WITH_BACKBONES if "clt" in block)
    params = _merged(copy.deepcopy(PARAMS), {k: v for k, v in recipe.items() if k != "backbones"})
    params["backbones"] = copy.deepcopy(recipe["backbones"])
    check_params(params)
