"""The stages' detail records: the types describe the committed outputs exactly, and a file of another shape
fails with one line that names the file, the field and the stage to rerun."""

import statistics

import pytest

from conftest import REPO
from laya.core.config import ConfigError
from laya.core.record import NotRun
from laya.core.seeds import mean_std
from laya.records.evaluate import EvaluateRecord
from laya.records.train import TrainRecord
from laya.report.inputs import RECORDS

DETAILS = sorted((REPO / "reports" / "details").glob("*.json"))


def _record_type(path):
    prefix = max((p for p in RECORDS if path.stem == p or path.stem.startswith(p + "_")), key=len)
    return RECORDS[prefix]


@pytest.mark.parametrize("path", DETAILS, ids=lambda p: p.stem)
def test_every_committed_detail_file_is_its_record_byte_for_byte(path, tmp_path):
    """Read through the type and written back: the same bytes (every field typed, nothing lost or converted)."""
    record = _record_type(path).read_optional(path) or NotRun.read(path)
    record.write(tmp_path / path.name)
    assert (tmp_path / path.name).read_bytes() == path.read_bytes()


def test_the_committed_details_cover_every_record():
    assert {_record_type(p) for p in DETAILS} == set(RECORDS.values())


def test_a_detail_file_of_another_shape_names_the_file_the_field_and_the_stage(tmp_path):
    path = tmp_path / "evaluate_mlp.json"
    path.write_text('{"faithfulness": {"laya": {"ig": "high"}}}')
    with pytest.raises(ConfigError) as err:
        EvaluateRecord.read(path)
    message = str(err.value)
    assert message.startswith(f"{path}: not the record evaluate@mlp writes (v1; faithfulness.laya.ig: ")
    assert message.endswith("rerun `dvc repro --force evaluate@mlp` with this laya.") and "\n" not in message
    path = tmp_path / "train_mlp.json"
    path.write_text('{"accuracy": {}, "macro_f1": {}, "extra": 1}')
    with pytest.raises(ConfigError, match=r"train_mlp.json: .*\(v1; extra: Extra inputs are not permitted\)"):
        TrainRecord.read(path)


def test_a_record_turned_off_by_its_entry_reads_as_none(tmp_path):
    path = tmp_path / "evaluate_cnn.json"
    NotRun(not_run="backbones.cnn.depth is false").write(path)
    assert EvaluateRecord.read_optional(path) is None and EvaluateRecord.read_optional(tmp_path / "x.json") is None


@pytest.mark.parametrize("values", [[0.9, 0.88, 0.91], [0.5], [1, 2, 3, 4]])
def test_mean_std_over_seeds_is_the_sample_std(values):
    mean, std = mean_std(values)
    assert mean == round(statistics.fmean(values), 6)
    assert std == (round(statistics.stdev(values), 6) if len(values) > 1 else 0.0)


def test_train_record_summarises_each_head_over_its_seeds():
    runs = {0: {"test_accuracy": 0.9, "macro_f1": 0.8, "capped": False},
            1: {"test_accuracy": 0.8, "macro_f1": 0.7, "capped": True}}
    record = TrainRecord.of({"laya": runs, "last": {0: {"test_accuracy": 0.7, "macro_f1": 0.6, "capped": False}}})
    assert record.capped == {"laya": [1]}  # a head whose seeds all converged is absent
    assert record.accuracy["laya"].seeds == {"s0": 0.9, "s1": 0.8}
    assert record.accuracy["laya"].mean == 0.85
    assert record.accuracy["laya"].std == round(statistics.stdev([0.9, 0.8]), 6)
    assert record.macro_f1["laya"].mean == 0.75
    assert EvaluateRecord.schema()["$id"] == "laya:evaluate/v1"
