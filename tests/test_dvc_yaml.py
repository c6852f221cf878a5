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
