"""The report renders the pipeline's metrics files, numbers unchanged."""

import json

from laya.report import render


def test_report_tables_come_from_metrics(tmp_path):
    for name, acc in (("mlp", 0.8875), ("vit", 0.8621)):
        (tmp_path / f"backbone_{name}.json").write_text(json.dumps(
            {"test_accuracy": acc, "best_epoch": 3, "parameters": 1234}))
        (tmp_path / f"{name}.json").write_text(json.dumps({
            "accuracy": {"last": {"mean": acc, "std": 0.001, "seeds": {"s0": acc}},
                         "laya": {"mean": acc + 0.01, "std": 0.002, "seeds": {"s0": acc + 0.01}}},
            "macro_f1": {"last": {"mean": 0.5}, "laya": {"mean": 0.6}}}))
    text = render(tmp_path, ["mlp", "vit"], ["laya", "last"])
    assert "| mlp | 0.8875 | 3 | 1,234 |" in text
    assert "| laya | 0.8975 ± 0.0020 | 0.8721 ± 0.0020 | 0.6000 | 0.6000 |" in text
    assert "over 1 seeds" in text
    assert text.index("| laya |") < text.index("| last |")  # rows in params heads.names order
