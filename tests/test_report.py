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


def test_report_renders_the_transcoder_tables(tmp_path):
    (tmp_path / "backbone_vit.json").write_text(json.dumps({"test_accuracy": 0.8, "best_epoch": 1, "parameters": 1}))
    last = {"mean": 0.8, "std": 0.0, "seeds": {"s0": 0.8}}
    (tmp_path / "vit.json").write_text(json.dumps({"accuracy": {"last": last}, "macro_f1": {"last": last}}))
    assert "no transcoder metrics yet: run `dvc repro clt`" in render(tmp_path, ["vit"])
    kind = {"r2": 0.98765, "cosine": 0.99, "l0": 16.0, "dead": 12, "dead_fraction": 0.25, "per_layer": {}}
    (tmp_path / "clt.json").write_text(json.dumps({"cls": kind, "patch": {**kind, "r2": 0.9}, "replacement": {
        "original": 0.8786, "cls": 0.8789, "patch": 0.8773, "patch_from_layer": 0.8786, "replace_from": 3,
        "cls_without_top_source": 0.824, "cls_top_sources": {"1": 0.8784, "2": 0.8787}}}))
    point = {"cls_r2": 0.97, "cls_cosine": 0.98, "cls_l0": 16.0, "patch_r2": 0.96, "patch_cosine": 0.97,
             "patch_l0": 16.0, "cls_replaced_accuracy": 0.879}
    (tmp_path / "clt_frontier.json").write_text(json.dumps({"original_accuracy": 0.8786, "relu_topk_k16": point}))
    text = render(tmp_path, ["vit"])
    assert "| cls | 0.9877 | 0.9900 | 16.0 | 12 (25.0%) |" in text
    assert "| | 0.8786 | 0.8789 | 0.8773 | 0.8786 | 0.8240 (−0.0549) |" in text
    assert "k=1 0.8784, k=2 0.8787" in text
    assert "| relu_topk_k16 | 0.9700 | 0.9800 | 16.0 | 0.9600 | 0.9700 | 16.0 | 0.8790 |" in text
