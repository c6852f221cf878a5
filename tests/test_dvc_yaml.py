"""dvc.yaml lists, for every stage, each laya/ module its script imports — so code changes rerun the right stages."""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO

STAGES = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]


def _imported_laya_files(script: str) -> set[str]:
    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('stage', {script!r})\n"
        "spec.loader.exec_module(importlib.util.module_from_spec(spec))\n"
        "print('\\n'.join(m.__file__ for n, m in sys.modules.items() if n.split('.')[0] == 'laya'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True).stdout
    return {str(Path(f).resolve().relative_to(REPO)) for f in out.split()}


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_stage_deps_cover_its_imports(stage):
    spec = STAGES[stage].get("do", STAGES[stage])
    script = spec["cmd"].split()[1]
    deps = [d.rstrip("/") for d in spec["deps"]]
    assert script in deps
    uncovered = [f for f in sorted(_imported_laya_files(script))
                 if not any(f == d or f.startswith(d + "/") for d in deps)]
    assert not uncovered, f"stage {stage}: add {uncovered} to its deps in dvc.yaml"
    code = [d for d in deps if d.startswith("laya")]
    assert len(code) <= 16, f"stage {stage}: {len(code)} laya/ deps; list packages (laya/core, laya/heads, …)"
    assert [d for d in code if any(d.startswith(other + "/") for other in code)] == [], "a dep inside another"


def _outs(spec: dict) -> list[str]:
    return [next(iter(o)) if isinstance(o, dict) else o
            for key in ("outs", "metrics", "plots") for o in spec.get(key, [])]


def test_the_report_depends_on_every_detail_curve_and_figure_whatever_the_backbones():
    """Its deps are folders, so outputs of a backbone added in params mark it stale without editing dvc.yaml."""
    deps = STAGES["report"]["deps"]
    read = ("reports/details/", "reports/curves/", "reports/figures/")
    outs = [o for name, stage in STAGES.items() if name != "report" for o in _outs(stage.get("do", stage))
            if o.startswith(read)]
    assert len(outs) >= 9
    assert [o for o in outs if not any(o == d or o.startswith(d.rstrip("/") + "/") for d in deps)] == []
    assert not any("${key}" in d or "mlp" in d for d in deps)


def test_dvc_metrics_are_the_headline_files_only():
    """Per-seed and per-layer numbers are plain outputs; `dvc exp show` sees the report's headline folder."""
    declared = [o for stage in STAGES.values() for o in (stage.get("do", stage).get("metrics") or [])]
    assert [next(iter(o)) if isinstance(o, dict) else o for o in declared] == ["reports/metrics"]
    assert "metrics" not in yaml.safe_load((REPO / "dvc.yaml").read_text())  # no top-level extra metrics


def _params_read(spec: dict) -> set[str]:
    return {str(next(iter(p)) if isinstance(p, dict) else p) for p in spec.get("params") or []}


@pytest.mark.parametrize(("section", "readers"), [
    ("heads", {"train", "depth", "report"}),  # `-S heads.laya.tau=…` retrains heads; backbones and caches stay
    ("evaluate", {"evaluate", "sanity", "report"}),  # report: which heads and methods its tables show
    ("clt", {"clt", "clt_compare", "clt_frontier", "extract"}),  # extract: clt.backbone, clt.compare: MLP inputs
])
def test_a_params_section_reruns_only_the_stages_that_read_it(section, readers):
    """What an ablation reruns: the stages whose params name the section (or a key under it) — nothing upstream.
    `check` validates every section (and DVC skips its unchanged stamp's dependants)."""
    reading = {name for name, stage in STAGES.items() if name != "check"
               and any(p == section or p.startswith(section + ".") for p in _params_read(stage.get("do", stage)))}
    assert reading == readers
