"""A requirement outside Python (conftest.needs) skips a test on a developer's machine and fails it under CI."""

import os
import subprocess
import sys

import pytest

from conftest import REPO

MISSING = '''
from conftest import needs

pytestmark = needs(False, "a dataset that is not there")


def test_uses_it():
    pass
'''


@pytest.mark.parametrize(("ci", "returncode", "said"), [
    ("", 0, "1 skipped"),
    ("true", 1, "CI=true and this test needs a dataset that is not there, which is missing"),
])
def test_a_missing_requirement_skips_locally_and_fails_under_ci(tmp_path, ci, returncode, said):
    (tmp_path / "test_missing.py").write_text(MISSING)
    env = {**os.environ, "CI": ci, "PYTHONPATH": str(REPO / "tests")}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "conftest", "-p", "no:cacheprovider",
                           "-p", "no:xdist", str(tmp_path / "test_missing.py")], cwd=tmp_path, env=env,
                          capture_output=True, text=True)
    assert done.returncode == returncode and said in done.stdout, done.stdout + done.stderr


def test_ci_runs_with_ci_set():
    """.ci/run sets CI=true when the CI service does not, so its `make test` cannot pass on skipped tests."""
    assert 'export CI="${CI:-true}"' in (REPO / ".ci" / "run").read_text()
