"""Outputs appear under their final names only when complete; several outputs of a stage move together."""

import shutil

import pytest

from laya.core.config import ConfigError
from laya.core.io import require_free_space, staged, write_json


def test_staged_outputs_replace_the_previous_ones_only_when_all_are_written(tmp_path):
    heads, metrics = tmp_path / "heads", tmp_path / "metrics.json"
    heads.mkdir()
    (heads / "old.txt").write_text("old heads")
    metrics.write_text("old metrics")
    with pytest.raises(RuntimeError), staged(heads, metrics) as (new_heads, new_metrics):
        new_heads.mkdir()
        (new_heads / "new.txt").write_text("new heads")
        write_json(new_metrics, {"accuracy": 1.0})
        raise RuntimeError("killed before the curves were written")
    assert [p.name for p in heads.iterdir()] == ["old.txt"] and metrics.read_text() == "old metrics"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["heads", "metrics.json"]  # no temporary litter

    with staged(heads, metrics) as (new_heads, new_metrics):
        new_heads.mkdir()
        (new_heads / "new.txt").write_text("new heads")
        write_json(new_metrics, {"accuracy": 1.0})
        assert metrics.read_text() == "old metrics"  # nothing moves before the block ends
    assert [p.name for p in heads.iterdir()] == ["new.txt"] and '"accuracy": 1.0' in metrics.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["heads", "metrics.json"]


def test_too_little_free_space_is_refused_before_the_work_with_the_amount(tmp_path):
    free = shutil.disk_usage(tmp_path).free
    require_free_space(tmp_path / "not" / "yet", free // 2, "extract@vit", "free space")  # a missing folder is fine
    with pytest.raises(ConfigError, match=r"extract@vit needs about .* free, only .* is available there; free sp"):
        require_free_space(tmp_path, free * 4, "extract@vit", "free space")


def test_writers_called_inside_staged_write_straight_into_its_temporary_path(tmp_path):
    with staged(tmp_path / "metrics.json") as (metrics,):
        write_json(metrics, {"a": 1})  # write_json is atomic itself: no second temporary name inside
        assert sorted(p.name for p in tmp_path.iterdir()) == [metrics.name]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["metrics.json"]
