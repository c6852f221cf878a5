"""The documentation cannot go stale: the params reference covers params.yaml exactly, every number a run produced
comes from reports/ (the findings block, the results pages), the hand-written pages hold none, and the README's
recipe is the guide's."""

import copy
import re
import subprocess

import pytest
import yaml

from conftest import REPO
from laya.check import check_params
from laya.core.params import load_params
from laya.data.fashion_mnist import CLASSES
from laya.reference.params import ENTRY, params_markdown, params_reference
from laya.report import ReportInputs, findings_markdown, replace_findings, report_blocks, results_pages
from laya.report.findings import FINDINGS_END, FINDINGS_START

PARAMS = load_params(REPO / "params.yaml")
README = (REPO / "README.md").read_text()
HAND_WRITTEN = [REPO / "README.md", *sorted(p for p in (REPO / "docs").rglob("*.md") if "results" not in p.parts)]
# a number a run produces: a decimal with two or more digits after the point, or a percentage (version pins such as
# 2.14.1 and arXiv ids are not); the 95 % of a confidence interval is a definition
RUN_NUMBER = re.compile(r"(?<![=\w.])\d+\.\d{2,}(?![\d.])|(?<![\w.])\d+(\.\d+)? ?%")
NOT_RUN_NUMBERS = re.compile(r"arXiv \S+|95 %|Python ≥ \S+")


def _leaf_keys(node, prefix=""):
    """params.yaml's keys, dotted, down to the values; a backbone's name becomes <name>."""
    for key, value in node.items():
        dotted = f"{prefix}.{key}" if prefix else key
        if prefix == "backbones":
            dotted = ENTRY
        if isinstance(value, dict) and value:
            yield from _leaf_keys(value, dotted)
        else:
            yield dotted


def test_the_params_reference_lists_every_key_params_yaml_has():
    listed = {k.key for k in params_reference(REPO / "dvc.yaml")}
    missing = sorted({key for key in _leaf_keys(PARAMS)
                      if not any(key == k or key.startswith(k + ".") for k in listed)})
    assert missing == []


def test_the_params_reference_lists_no_other_key():
    """A key listed but absent from params.yaml is an optional one the typed configs accept: check takes it."""
    present = set(_leaf_keys(PARAMS))
    for key in params_reference(REPO / "dvc.yaml"):
        covered = any(p == key.key or p.startswith(key.key + ".") or key.key.startswith(p + ".") for p in present)
        if covered or key.default == "required" or "<name>" in key.key and ".model." in key.key:
            continue  # an arch's model keys: only the built-in archs' are typed, checked by the entry itself
        params = copy.deepcopy(PARAMS)
        owner = "mlp_joint" if ".joint" in key.key else "mlp_transfer" if "pretrain" in key.key else "mlp"
        parts = key.key.replace(ENTRY, f"backbones.{owner}").split(".")
        node = params
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = yaml.safe_load(key.default)
        check_params(params)  # raises ConfigError naming the key if the reference invented it


def test_the_params_reference_says_what_every_key_does_and_who_reads_it():
    keys = params_reference(REPO / "dvc.yaml")
    assert [k.key for k in keys if not k.doc] == []
    read_by = {k.key: k.read_by for k in keys}
    assert read_by["heads.laya.tau"] == ("train@<name>", "depth@<name>")
    assert "clt" in read_by["clt.k"] and "report" in read_by["evaluate.methods"]
    assert read_by["workers"] == ()  # not a stage param: changing it reruns nothing
    page = params_markdown(keys)
    assert "| `data.val_fraction` | `float` | `0.1` | `prepare` |" in page
    assert "## `backbones.<name>.backbone` — architecture, training, protocol" in page  # a key stays code
    assert "cuda:&lt;index&gt;" in page  # text outside code: `<index>` escaped, not swallowed as a tag


def _inputs() -> ReportInputs:
    root = REPO / "reports"
    return ReportInputs.from_params(PARAMS, root / "details", root / "curves", root / "figures", len(CLASSES))


def test_the_readme_findings_are_the_reports_own():
    block = README.split(FINDINGS_START)[1].split(FINDINGS_END)[0]
    assert block.strip() and block == "\n" + findings_markdown(_inputs())


def test_the_results_pages_are_the_reports_own():
    inputs = _inputs()
    pages = results_pages(inputs, report_blocks(inputs), REPO / "docs" / "results")
    assert sorted(pages) == sorted(p.name for p in (REPO / "docs" / "results").iterdir())
    for name, text in pages.items():
        assert (REPO / "docs" / "results" / name).read_text() == text, f"docs/results/{name} is stale"


def test_a_changed_number_shows_in_the_findings():
    """The comparison can fail: findings from other numbers are not the README's."""
    inputs = _inputs()
    changed = findings_markdown(inputs).replace("7 of 7", "6 of 7")
    assert replace_findings(README, changed, "README.md") != README


@pytest.mark.parametrize("page", HAND_WRITTEN, ids=lambda p: str(p.relative_to(REPO)))
def test_no_hand_written_page_copies_a_number_from_a_run(page):
    text = page.read_text()
    if FINDINGS_START in text:
        text = text.split(FINDINGS_START)[0] + text.split(FINDINGS_END)[1]
    found = [m.group(0) for m in RUN_NUMBER.finditer(NOT_RUN_NUMBERS.sub("", text))]
    assert found == [], f"{page.name}: numbers belong in reports/ and the generated pages: {found}"


def test_the_number_guard_finds_a_copied_number():
    assert RUN_NUMBER.search("LAYA's faithfulness is 0.827 on mlp") and RUN_NUMBER.search("53 % of its FLOPs")
    assert not RUN_NUMBER.search("torch==2.14.1, d* = 96, τ = 1.5, lr 3e-4")


def _recipe(text: str) -> str:
    section = text.split("## Your own timm model and ImageFolder data", 1)[1]
    return re.search(r"```yaml\n(.*?)```", section, re.S).group(1)


def test_the_readme_recipe_is_the_guide_s_and_passes_check():
    recipe = _recipe(README)
    assert recipe == _recipe((REPO / "docs" / "guide" / "own-data.md").read_text())
    changes = yaml.safe_load(recipe)
    params = copy.deepcopy(PARAMS)
    for section, values in changes.items():
        if section == "backbones":
            params[section] = values
        else:
            params[section] = {**params[section], **values}
    check_params(params)


def test_plain_dvc_metrics_show_fits_200_columns():
    shown = subprocess.run(["dvc", "metrics", "show"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    lines = shown.splitlines()
    assert len(lines) == len(PARAMS["backbones"]) + 2  # the header, a row per backbone, clt
    assert max(map(len, lines)) <= 200, shown


def test_the_metrics_reference_says_what_every_headline_key_and_record_field_is():
    from laya.reference.fields import documented
    from laya.reference.metrics import metrics_markdown
    from laya.report.inputs import RECORDS

    assert {record.STAGE: [n for n in record.model_fields if not documented(record)[0].get(n)]
            for record in RECORDS.values()} == {record.STAGE: [] for record in RECORDS.values()}
    assert "| `faith.alpha` | `<backbone>.json` |" in metrics_markdown()
