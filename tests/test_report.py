"""The report renders the pipeline's metrics files, numbers unchanged."""

import json

from laya.report import ReportInputs, render


def _inputs(folder, backbones, dataset="Fashion-MNIST"):
    return ReportInputs(dataset, {b: folder / f"backbone_{b}.json" for b in backbones},
                        {b: folder / f"{b}.json" for b in backbones},
                        {b: folder / f"evaluate_{b}.json" for b in backbones},
                        folder / "clt.json", folder / "clt_frontier.json")


def test_report_tables_come_from_metrics(tmp_path):
    for name, acc in (("mlp", 0.8875), ("vit", 0.8621)):
        (tmp_path / f"backbone_{name}.json").write_text(json.dumps(
            {"test_accuracy": acc, "best_epoch": 3, "parameters": 1234}))
        (tmp_path / f"{name}.json").write_text(json.dumps({
            "accuracy": {"last": {"mean": acc, "std": 0.001, "seeds": {"s0": acc}},
                         "laya": {"mean": acc + 0.01, "std": 0.002, "seeds": {"s0": acc + 0.01}}},
            "macro_f1": {"last": {"mean": 0.5}, "laya": {"mean": 0.6}}}))
    text = render(_inputs(tmp_path, ["mlp", "vit"]), ["laya", "last"])
    assert "| mlp | 0.8875 | 3 | 1,234 |" in text
    assert "| laya | 0.8975 ± 0.0020 | 0.8721 ± 0.0020 | 0.6000 | 0.6000 |" in text
    assert "over 1 seeds" in text
    assert text.index("| laya |") < text.index("| last |")  # rows in params heads.names order
    assert "(Fashion-MNIST test split)" in text
    assert "CIFAR-10 test split" in render(_inputs(tmp_path, ["mlp"], "CIFAR-10"))


def test_report_rows_are_head_method_pairs(tmp_path):
    for name in ("backbone_mlp", "mlp"):
        (tmp_path / f"{name}.json").write_text(json.dumps(
            {"test_accuracy": 0.9, "best_epoch": 1, "parameters": 1} if name.startswith("backbone") else
            {"accuracy": {"laya": {"mean": 0.9, "std": 0.0, "seeds": {"s0": 0.9}}},
             "macro_f1": {"laya": {"mean": 0.9}}}))
    pair = {"laya": {"intrinsic": 0.766, "ig": 0.931}, "concat": {"ig": 0.5}}
    (tmp_path / "evaluate_mlp.json").write_text(json.dumps({
        "faithfulness": pair, "faithfulness_std": pair, "deletion_at_1": pair, "deletion_at_1_std": pair,
        "deletion_auc": pair, "faithfulness_undefined": {h: dict.fromkeys(m, 0) for h, m in pair.items()},
        "accuracy": {"laya": 0.9}, "ablated_accuracy": {"laya": {"blocks.0": 0.8}}}))
    text = render(_inputs(tmp_path, ["mlp"]), ["laya"], [("intrinsic", "laya"), ("ig", "laya"), ("ig", "concat")])
    assert "| laya | intrinsic | 0.766 ± 0.766 |" in text and "| concat | ig | 0.500 ± 0.500 |" in text
    assert text.index("| laya | intrinsic |") < text.index("| laya | ig |") < text.index("| concat | ig |")


def test_report_renders_the_transcoder_tables(tmp_path):
    (tmp_path / "backbone_vit.json").write_text(json.dumps({"test_accuracy": 0.8, "best_epoch": 1, "parameters": 1}))
    last = {"mean": 0.8, "std": 0.0, "seeds": {"s0": 0.8}}
    (tmp_path / "vit.json").write_text(json.dumps({"accuracy": {"last": last}, "macro_f1": {"last": last}}))
    assert "no transcoder metrics yet: run `dvc repro clt`" in render(_inputs(tmp_path, ["vit"]))
    kind = {"r2": 0.98765, "cosine": 0.99, "l0": 16.0, "dead": 12, "dead_fraction": 0.25, "per_layer": {}}
    (tmp_path / "clt.json").write_text(json.dumps({"cls": kind, "patch": {**kind, "r2": 0.9}, "replacement": {
        "original": 0.8786, "cls": 0.8789, "patch": 0.8773, "patch_from_layer": 0.8786, "replace_from": 3,
        "cls_without_top_source": 0.824, "cls_top_sources": {"1": 0.8784, "2": 0.8787}}}))
    point = {"cls_r2": 0.97, "cls_cosine": 0.98, "cls_l0": 16.0, "patch_r2": 0.96, "patch_cosine": 0.97,
             "patch_l0": 16.0, "cls_replaced_accuracy": 0.879}
    (tmp_path / "clt_frontier.json").write_text(json.dumps({"original_accuracy": 0.8786, "relu_topk_k16": point}))
    text = render(_inputs(tmp_path, ["vit"]))
    assert "| cls | 0.9877 | 0.9900 | 16.0 | 12 (25.0%) |" in text
    assert "| | 0.8786 | 0.8789 | 0.8773 | 0.8786 | 0.8240 (−0.0549) |" in text
    assert "k=1 0.8784, k=2 0.8787" in text
    assert "| relu_topk_k16 | 0.9700 | 0.9800 | 16.0 | 0.9600 | 0.9700 | 16.0 | 0.8790 |" in text
