"""The report renders the stages' detail files, numbers unchanged: tables, headline metrics, plot data, pages."""

import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from laya.backbones.config import BackboneConfig  # noqa: E402
from laya.report import (  # noqa: E402
    ReportInputs,
    backbone_headline,
    clt_headline,
    report_blocks,
    to_html,
    to_markdown,
    write_plot_data,
)
from laya.report.findings import findings

KIND = {"r2": 0.98765, "fvu": 0.01235, "cosine": 0.99, "l0": 16.0, "dead": 12, "dead_fraction": 0.25, "dense": 3,
        "dense_fraction": 0.0625}
# a distinct value in every column, so a table or headline that reads the wrong key shows it
PAIR = {"laya": {"intrinsic": 0.766, "ig": 0.931}, "concat": {"ig": 0.5}}  # faithfulness
PAIR_STD = {"laya": {"intrinsic": 0.012, "ig": 0.034}, "concat": {"ig": 0.056}}
DELETION = {"laya": {"intrinsic": 0.217, "ig": 0.328}, "concat": {"ig": 0.439}}
DELETION_STD = {"laya": {"intrinsic": 0.001, "ig": 0.002}, "concat": {"ig": 0.003}}
DELETION_AUC = {"laya": {"intrinsic": 0.61, "ig": 0.52}, "concat": {"ig": 0.43}}


def _write(folder, name, payload):
    (folder / name).write_text(json.dumps(payload))


def _details(folder, backbones=("mlp", "vit")):
    for name, acc in zip(backbones, (0.8875, 0.8621)):
        _write(folder, f"backbone_{name}.json", {"test_accuracy": acc, "val_accuracy": acc + 0.005, "best_epoch": 3,
                                                 "parameters": 1234})
        _write(folder, f"train_{name}.json", {
            "accuracy": {"last": {"mean": acc, "std": 0.001, "seeds": {"s0": acc - 0.001, "s1": acc + 0.001}},
                         "laya": {"mean": acc + 0.01, "std": 0.002, "seeds": {"s0": acc + 0.008, "s1": acc + 0.012}}},
            "macro_f1": {"last": {"mean": acc - 0.3}, "laya": {"mean": acc - 0.2}}})
    return folder


def _evaluate(folder, name="mlp"):
    _write(folder, f"evaluate_{name}.json", {
        "faithfulness": PAIR, "faithfulness_std": PAIR_STD, "deletion_at_1": DELETION,
        "deletion_at_1_std": DELETION_STD, "deletion_auc": DELETION_AUC,
        "faithfulness_undefined": {h: dict.fromkeys(m, 0) for h, m in PAIR.items()},
        "accuracy": {"laya": 0.9}, "ablated_accuracy": {"laya": {"blocks.0": 0.8}}, "alpha_entropy": {"laya": 0.7},
        "seeds": 3})


def _clt(folder):
    shares = {"cls": {"mean": 0.4, "ci95": [0.38, 0.42]}, "patch": {"mean": 0.5, "ci95": [0.49, 0.51]},
              "cls_minus_patch": {"mean": -0.1, "ci95": [-0.12, -0.08]}, "holds": False, "images": 100,
              "resamples": 999}
    _write(folder, "clt_compare_vit.json", {"backbone": "vit", "asymmetry": {**shares, "holds": True}, "cls": KIND,
                                            "patch": KIND})
    _write(folder, "clt.json", {"backbone": "vit0", "asymmetry": shares, "cls": {**KIND, "per_layer": {}},
                                "patch": {**KIND, "r2": 0.9, "per_layer": {}},
                                "replacement": {
        "original": 0.8786, "cls": 0.8789, "patch": 0.8773, "patch_from_layer": 0.8786, "replace_from": 3,
        "cls_without_top_source": 0.824, "cls_top_sources": {"1": 0.8784, "2": 0.8787}}})
    point = {"cls_r2": 0.97, "cls_cosine": 0.98, "cls_l0": 16.0, "patch_r2": 0.96, "patch_cosine": 0.97,
             "patch_l0": 16.0, "cls_replaced_accuracy": 0.879, "patch_dead_fraction": 0.25, "cls_dead_fraction": 0.125,
             "cls_dense_fraction": 0.03125,
             "patch_dense_fraction": 0.0625, "cls_fvu_per_layer": [0.01, 0.02], "patch_fvu_per_layer": [0.03, 0.05]}
    _write(folder, "clt_frontier.json", {"original_accuracy": 0.8786, "relu_topk_k16": point,
                                          "jumprelu_l0.001": {**point, "cls_l0": 30.5},
                                          "sae_relu_topk_k16": {**point, "patch_fvu_per_layer": [0.5, 0.25]}})


def _markdown(inputs):
    return to_markdown(report_blocks(inputs), inputs.details)


def test_report_tables_come_from_the_details(tmp_path):
    details = _details(tmp_path)
    text = _markdown(ReportInputs("Fashion-MNIST", ["mlp", "vit"], details, heads=["laya", "last"]))
    assert "| mlp | 0.8875 | 3 | 1,234 |" in text
    assert "| laya | 0.8975 ± 0.0020 | 0.8721 ± 0.0020 | 0.6875 | 0.6621 |" in text
    assert "over 2 seeds" in text
    assert text.index("| laya |") < text.index("| last |")  # rows in params heads.names order
    assert "(Fashion-MNIST test split)" in text
    assert "no evaluate metrics yet" in text and "no transcoder metrics yet: run `dvc repro clt`" in text
    assert "CIFAR-10 test split" in _markdown(ReportInputs("CIFAR-10", ["mlp"], details))


def test_report_rows_are_head_method_pairs(tmp_path):
    _evaluate(_details(tmp_path, ["mlp"]))
    pairs = [("intrinsic", "laya"), ("ig", "laya"), ("ig", "concat")]
    text = _markdown(ReportInputs("Fashion-MNIST", ["mlp"], tmp_path, heads=["laya"], pairs=pairs))
    assert "| laya | intrinsic | 0.766 ± 0.012 | 0.217 ± 0.001 | 0.6100 |" in text
    assert "| concat | ig | 0.500 ± 0.056 | 0.439 ± 0.003 | 0.4300 |" in text
    assert text.index("| laya | intrinsic |") < text.index("| laya | ig |") < text.index("| concat | ig |")


def test_report_renders_the_transcoder_tables(tmp_path):
    _clt(_details(tmp_path, ["vit"]))
    text = _markdown(ReportInputs("Fashion-MNIST", ["vit"], tmp_path))
    assert "| cls | 0.9877 | 0.9900 | 16.0 | 12 (25.0%) |" in text
    assert "|  | 0.8786 | 0.8789 | 0.8773 | 0.8786 | 0.8240 (−0.0549) |" in text
    assert "k=1 0.8784, k=2 0.8787" in text
    assert "| vit0 | 0.400 [0.380, 0.420] | 0.500 [0.490, 0.510] | -0.100 [-0.120, -0.080] | no |" in text
    assert "| vit | 0.400 [0.380, 0.420] |" in text  # clt_compare@vit, after the clt stage's own ViT
    assert "| relu_topk_k16 | clt | 0.9700 | 16.0 | 0.9600 | 16.0 | 25.0% | 6.2% | 0.8790 |" in text
    assert "| sae_relu_topk_k16 | sae | 0.9700 |" in text and "| jumprelu_l0.001 | clt | 0.9700 | 30.5 |" in text
    assert "ReLU-TopK models at k = 16" in text  # FVU per block: the CLT beside the SAE at the shared k
    assert "| relu_topk_k16 | patch | 0.030 | 0.050 |" in text
    assert "| sae_relu_topk_k16 | patch | 0.500 | 0.250 |" in text


def test_headline_metrics_are_the_same_keys_for_every_backbone(tmp_path):
    """One row per backbone in `dvc metrics show`: no backbone name in a key, α beside IG on the LAYA head."""
    _evaluate(_details(tmp_path, ["mlp", "cnn"]))
    _evaluate(tmp_path, "cnn")
    _clt(tmp_path)
    inputs = ReportInputs("Fashion-MNIST", ["mlp", "cnn"], tmp_path, heads=["laya", "last"])
    assert backbone_headline(inputs, "mlp") == {
        "acc": {"backbone": 0.8875, "laya": 0.8975, "last": 0.8875},
        "faith": {"alpha": PAIR["laya"]["intrinsic"], "ig": PAIR["laya"]["ig"]},
        "del1": {"alpha": DELETION["laya"]["intrinsic"]}}
    assert backbone_headline(inputs, "cnn").keys() == backbone_headline(inputs, "mlp").keys()
    assert clt_headline(inputs) == {"clt": {"r2": 0.98765, "acc": 0.8789}}


def test_plot_data_averages_the_seeds_curves_and_lists_every_attribution(tmp_path):
    details = tmp_path / "details"
    details.mkdir()
    _evaluate(_details(details, ["mlp"]))
    _clt(details)
    curves = tmp_path / "curves" / "mlp"
    curves.mkdir(parents=True)
    (curves / "laya.csv").write_text("seed,epoch,val_acc\n0,1,0.5\n0,2,0.7\n1,1,0.6\n1,2,0.8\n1,3,0.9\n")
    (curves / "last.csv").write_text("seed,epoch,val_acc\n0,1,0.4\n")
    inputs = ReportInputs("Fashion-MNIST", ["mlp"], details, tmp_path / "curves", heads=["laya", "last"],
                          pairs=[("ig", "laya"), ("intrinsic", "laya")])
    written = write_plot_data(inputs, tmp_path / "plots")
    assert sorted(p.relative_to(tmp_path / "plots").as_posix() for p in written) == [
        "curves/mlp.csv", "deletion_at_1/mlp.csv", "faithfulness/mlp.csv", "frontier.csv"]
    assert (tmp_path / "plots" / "curves" / "mlp.csv").read_text().splitlines() == [
        "head,epoch,val_acc", "laya,1,0.55", "laya,2,0.75", "laya,3,0.9", "last,1,0.4"]
    assert (tmp_path / "plots" / "faithfulness" / "mlp.csv").read_text().splitlines() == [
        "attribution,faithfulness,std", "ig@laya,0.931,0.034", "intrinsic@laya,0.766,0.012", "ig@concat,0.5,0.056"]
    frontier = (tmp_path / "plots" / "frontier.csv").read_text().splitlines()
    assert frontier[0] == "activation,label,cls_l0,cls_r2,patch_l0,patch_r2"
    assert [row.split(",")[0] for row in frontier[1:]] == ["relu_topk", "jumprelu", "sae_relu_topk"]  # its own line


def test_the_pages_carry_the_figures_as_links_and_inline(tmp_path):
    _details(tmp_path, ["mlp"])
    figures = tmp_path / "figures" / "mlp"
    figures.mkdir(parents=True)
    plt.plot([0, 1])
    plt.savefig(figures / "methods.png")
    plt.close()
    inputs = ReportInputs("Fashion-MNIST", ["mlp"], tmp_path, figures=tmp_path / "figures")
    blocks = report_blocks(inputs)
    assert "![mlp: faithfulness and Deletion@1" in to_markdown(blocks, tmp_path) and "](figures/mlp/methods.png)" \
        in to_markdown(blocks, tmp_path)
    page = to_html(blocks, "laya report")
    assert page.count('<img alt="mlp: faithfulness') == 1 and 'src="data:image/png;base64,iVBOR' in page
    assert "<td>mlp</td><td>0.8875</td>" in page and "<code>dvc repro" in page


def test_protocol_tables_put_each_architecture_s_protocols_side_by_side_with_the_paper_beside_them(tmp_path):
    _details(tmp_path, ["mlp", "mlp_joint"])
    _write(tmp_path, "backbone_mlp_transfer.json", {"test_accuracy": 0.95, "val_accuracy": 0.96, "best_epoch": 2,
                                                    "parameters": 9, "protocol": "transfer", "pretrain_classes": [0]})
    _write(tmp_path, "train_mlp_transfer.json", {
        "accuracy": {"last": {"mean": 0.80, "std": 0.01, "seeds": {"s0": 0.79, "s1": 0.81}},
                     "laya": {"mean": 0.8125, "std": 0.01, "seeds": {"s0": 0.8025, "s1": 0.8225}}}, "macro_f1": {}})
    train = json.loads((tmp_path / "train_mlp_joint.json").read_text())
    train["accuracy"]["laya_joint"] = {"mean": 0.8866, "std": 0.003, "seeds": {"s0": 0.8836, "s1": 0.8896}}
    _write(tmp_path, "train_mlp_joint.json", train)
    _write(tmp_path, "evaluate_mlp_joint.json", {
        "faithfulness": {"laya_joint": {"intrinsic": 0.88}}, "faithfulness_std": {"laya_joint": {"intrinsic": 0.01}},
        "deletion_at_1": {"laya_joint": {"intrinsic": 0.2}}, "deletion_at_1_std": {"laya_joint": {"intrinsic": 0.0}},
        "deletion_auc": {"laya_joint": {"intrinsic": 0.1}}, "faithfulness_undefined": {"laya_joint": {"intrinsic": 0}},
        "accuracy": {"laya_joint": 0.88}, "ablated_accuracy": {"laya_joint": {"l0": 0.5}},
        "alpha_entropy": {"laya_joint": 0.6}, "seeds": 3})
    entries = {"mlp_transfer": BackboneConfig(arch="mlp", protocol="transfer", pretrain_classes=[0]),
               "mlp": BackboneConfig(arch="mlp"), "mlp_joint": BackboneConfig(arch="mlp", protocol="joint")}
    text = _markdown(ReportInputs("Fashion-MNIST", list(entries), tmp_path, heads=["last", "laya"],
                                  entries=entries, classes=3))
    table = text[text.index("| backbone | arch | protocol |"):]
    assert table.index("| mlp | mlp | frozen |") < table.index("| mlp_joint | mlp | joint |") < table.index(
        "| mlp_transfer | mlp | transfer |")
    assert "| mlp_joint | mlp | joint | 2 | 0.8621 | 0.8621 ± 0.0010 | 0.8721 ± 0.0020 | 0.8866 ± 0.0030 |" in table
    assert "Chance accuracy: 1/3 for frozen and joint entries; 1/2 for `mlp_transfer`." in text  # from the data
    assert "laya_joint accuracy 0.8866 ± 0.0030 (paper 0.8842), faithfulness of α 0.880 ± 0.010" in text
    assert "LAYA 0.8125 ± 0.0100 vs LastLayer 0.8000 ± 0.0100: +1.25 pp." in text
    assert "target met" not in text and "missed" not in text  # results beside references, not grades
    assert "| mlp_joint | mlp | joint | laya_joint | intrinsic | 0.880 ± 0.010 | 0.200 ± 0.000 |" in text


def test_one_seed_prints_no_spread_and_layers_read_in_depth_order(tmp_path):
    """A user's own run: one seed, a 12-block timm ViT (blocks.10 after blocks.2), timm backbones told apart."""
    _details(tmp_path, ["vit", "resnet"])
    for name in ("vit", "resnet"):
        train = json.loads((tmp_path / f"train_{name}.json").read_text())
        train["accuracy"] = {h: {**a, "seeds": {"s0": a["mean"]}} for h, a in train["accuracy"].items()}
        _write(tmp_path, f"train_{name}.json", train)
    _evaluate(tmp_path, "vit")
    evaluation = json.loads((tmp_path / "evaluate_vit.json").read_text())
    evaluation["seeds"] = 1
    evaluation["ablated_accuracy"] = {"laya": {f"blocks.{i}": 0.5 + i / 100 for i in range(12)}}
    _write(tmp_path, "evaluate_vit.json", evaluation)
    entries = {"vit": BackboneConfig(arch="timm", model={"name": "vit_tiny_patch16_224"}),
               "resnet": BackboneConfig(arch="timm", model={"name": "resnet18"})}
    text = _markdown(ReportInputs("ImageFolder", list(entries), tmp_path, heads=["laya"], entries=entries))
    assert "±" not in text.split("## Layer attributions")[0].split("## Heads")[1]
    assert "| laya | intrinsic | 0.766 | 0.217 |" in text
    row = next(line for line in text.splitlines() if line.startswith("| vit | laya | 0.9000 |"))
    assert row.index("(blocks.2)") < row.index("(blocks.10)") and row.endswith("0.6100 (blocks.11) |")
    assert "| vit | timm:vit_tiny_patch16_224 | frozen |" in text and "| resnet | timm:resnet18 | frozen |" in text


def test_sanity_tables_show_each_step_and_the_random_label_head(tmp_path):
    _details(tmp_path, ["mlp"])
    head = {"samples": 1000, "accuracy": {"trained": 0.9, "classifier": 0.1, "scorer": 0.1, "adapters": 0.1,
                                          "random_labels": 0.11},
            "random_labels_train_accuracy": 0.2,
            "model_randomisation": {"intrinsic": {"classifier": 1.0, "scorer": 0.12, "adapters": -0.05}},
            "data_randomisation": {"intrinsic": 0.3}, "undefined": {}}
    _write(tmp_path, "sanity_mlp.json", {"seed": 0, "ablation": "mean", "heads": {"laya": head}})
    text = _markdown(ReportInputs("Fashion-MNIST", ["mlp"], tmp_path))
    assert "| mlp | laya | intrinsic | 1.000 | 0.120 | −0.050 | 0.300 |" in text
    assert "| mlp | laya | 0.9000 | 0.1000 | 0.1000 | 0.1000 | 0.1100 | 0.2000 |" in text


def test_aligned_block_puts_laya_beside_it_under_both_ablations(tmp_path):
    _details(tmp_path, ["mlp"])
    train = json.loads((tmp_path / "train_mlp.json").read_text())
    train["accuracy"]["laya_aligned"] = {"mean": 0.8955, "std": 0.001, "seeds": {"s0": 0.8945, "s1": 0.8965}}
    _write(tmp_path, "train_mlp.json", train)
    pairs = {"laya": {"intrinsic": 0.766, "ig": 0.931, "loo": 1.0}, "laya_aligned": {"intrinsic": 0.95, "ig": 0.94}}
    stds = {"laya": {"intrinsic": 0.011, "ig": 0.012, "loo": 0.0}, "laya_aligned": {"intrinsic": 0.013, "ig": 0.014}}
    deletion = {"laya": {"intrinsic": 0.21, "ig": 0.22, "loo": 0.3}, "laya_aligned": {"intrinsic": 0.23, "ig": 0.24}}
    deletion_std = {"laya": {"intrinsic": 0.031, "ig": 0.032, "loo": 0.0}, "laya_aligned": {"intrinsic": 0.033,
                                                                                           "ig": 0.034}}
    crossed = {"laya_aligned": {"intrinsic": 0.81, "ig": 0.89}}
    crossed_std = {"laya_aligned": {"intrinsic": 0.021, "ig": 0.022}}
    _write(tmp_path, "evaluate_mlp.json", {
        "faithfulness": pairs, "faithfulness_std": stds, "deletion_at_1": deletion, "deletion_at_1_std": deletion_std,
        "deletion_auc": deletion, "faithfulness_undefined": {h: dict.fromkeys(m, 0) for h, m in pairs.items()},
        "accuracy": {"laya": 0.9}, "ablated_accuracy": {"laya": {"blocks.0": 0.8}}, "alpha_entropy": {"laya": 0.7},
        "seeds": 3, "cross_ablation": {"ablation": "zero", "faithfulness": crossed, "faithfulness_std": crossed_std,
                                       "deletion_at_1": crossed_std, "deletion_at_1_std": crossed_std}})
    text = _markdown(ReportInputs("Fashion-MNIST", ["mlp"], tmp_path))
    section = text[text.index("## An aligned LAYA"):]
    assert "| mlp | laya_aligned | 0.8955 ± 0.0010 | intrinsic | 0.950 ± 0.013 | 0.230 ± 0.033 | 0.810 ± 0.021 |" \
        in section
    assert "| mlp | laya | 0.8975 ± 0.0020 | ig | 0.931 ± 0.012 | 0.220 ± 0.032 | — |" in section
    assert "| loo |" not in section  # the oracle is the target itself, not a competitor
    assert "`mlp`: faithfulness of α 0.950 vs IG on the same head 0.940; accuracy 0.8955 vs LAYA 0.8975 (-0.20 pp)." \
        in section


def test_no_aligned_section_without_an_aligned_head(tmp_path):
    _evaluate(_details(tmp_path, ["mlp"]))
    assert "An aligned LAYA" not in _markdown(ReportInputs("Fashion-MNIST", ["mlp"], tmp_path))


def test_failure_table_puts_alpha_beside_the_msp_baseline_and_in_the_headline(tmp_path):
    _evaluate(_details(tmp_path, ["mlp"]))
    path = tmp_path / "evaluate_mlp.json"
    evaluation = json.loads(path.read_text())
    detector = {"auroc": 0.9, "aupr": 0.5}
    evaluation["failure_detection"] = {"head": "laya", "msp": detector, "alpha": {"auroc": 0.6, "aupr": None},
                                       "msp_alpha": {"auroc": 0.925, "aupr": 0.55}, "test_errors": 1100.0,
                                       "val_errors": 600.0}
    evaluation["failure_detection_std"] = {"msp": {"auroc": 0.01, "aupr": 0.02}, "alpha": {"auroc": 0.03, "aupr": None},
                                           "msp_alpha": {"auroc": 0.04, "aupr": 0.05}, "head": "laya",
                                           "test_errors": 10.0, "val_errors": 6.0}
    path.write_text(json.dumps(evaluation))
    inputs = ReportInputs("Fashion-MNIST", ["mlp"], tmp_path, heads=["laya"])
    text = _markdown(inputs)
    assert "## Failure detection" in text
    assert ("| mlp | laya | 1100 | 0.9000 ± 0.0100 | 0.6000 ± 0.0300 | 0.9250 ± 0.0400 | 0.5000 ± 0.0200 | — | "
            "0.5500 ± 0.0500 | +0.0250 |") in text  # the last column: Δ AUROC = MSP + α − MSP
    assert backbone_headline(inputs, "mlp")["fail"] == {"alpha": 0.6}


def test_depth_tables_put_alpha_beside_its_baselines(tmp_path):
    _details(tmp_path, ["mlp"])
    point = {"removed": 0, "kept": ["b0", "b1"], "test_accuracy": 0.9, "flops": 10, "flops_fraction": 1.0}
    curves = {"alpha": [point, {**point, "removed": 1, "kept": ["b1"], "test_accuracy": 0.89}],
              "random0": [point, {**point, "removed": 1, "test_accuracy": 0.7, "flops_fraction": 0.4}],
              "random1": [point, {**point, "removed": 1, "test_accuracy": 0.8, "flops_fraction": 0.4}]}
    summary = {name: {"flops_within_tolerance": 1.0, "accuracy_one_removed": 0.5, "mean_accuracy_removed": 0.4}
               for name in curves}
    rules = {"msp": {"area": 0.85, "flops_within_tolerance": 0.5, "points": []},
             "alpha": {"area": 0.86, "flops_within_tolerance": None, "points": []}}
    _write(tmp_path, "depth_mlp.json", {
        "backbone": "mlp", "head": "laya", "seed": 0, "layers": ["b0", "b1"], "flops": [5, 10], "tolerance": 0.01,
        "pruning": {"curves": curves, "summary": summary, "orders": {"alpha": ["b0", "b1"]}, "full_accuracy": 0.9,
                    "importance": {"alpha": [0.3, 0.7]}},
        "early_exit": {"full_accuracy": 0.9, "prefix_accuracy": [0.6, 0.9], "rules": rules}})
    inputs = ReportInputs("Fashion-MNIST", ["mlp"], tmp_path, heads=["laya"])
    text = _markdown(inputs)
    assert "| mlp | alpha | b0 → b1 | 0.9000 / 0.8900 | 1.000 |" in text
    assert "| mlp | random (mean of 2) | — | 0.9000 / 0.7500 | 1.000 |" in text
    assert "| mlp | msp | 0.8500 | 0.500 | 0.9000 |" in text and "| mlp | alpha | 0.8600 | — | 0.9000 |" in text
    assert not {"prune", "exit"} & set(backbone_headline(inputs, "mlp"))  # frozen entries only: in the details


def test_the_findings_state_what_the_numbers_say(tmp_path):
    """Each finding is derived from the records: α behind IG, LRP's place between them, LAYA vs LastLayer."""
    _details(tmp_path, ["mlp"])
    evaluation = {"faithfulness": {"laya": {"intrinsic": 0.8, "ig": 0.9, "lrp_delta": 0.85}},
                  "faithfulness_std": {"laya": {"intrinsic": 0.0, "ig": 0.0, "lrp_delta": 0.0}},
                  "deletion_at_1": {"laya": {"intrinsic": 0.5, "ig": 0.6, "lrp_delta": 0.55}},
                  "deletion_at_1_std": {"laya": {"intrinsic": 0.0, "ig": 0.0, "lrp_delta": 0.0}},
                  "deletion_auc": {"laya": {"intrinsic": 0.3, "ig": 0.2, "lrp_delta": 0.25}},
                  "faithfulness_undefined": {"laya": {"intrinsic": 0, "ig": 0, "lrp_delta": 0}},
                  "accuracy": {"laya": 0.9}, "ablated_accuracy": {"laya": {"b0": 0.8}},
                  "alpha_entropy": {"laya": 0.5}, "seeds": 2}
    _write(tmp_path, "evaluate_mlp.json", evaluation)
    found = findings(ReportInputs("Fashion-MNIST", ["mlp"], tmp_path, heads=["laya", "last"]))
    assert found[0].startswith("**Accuracy.**") and "`mlp` +1.00" in found[0]  # laya 0.8975 vs last 0.8875
    assert "less faithfully than Integrated Gradients on 1 of 1 backbones" in found[1] and "of α 0.800" in found[1]
    assert "more faithfully than α on 1 of 1 backbones and reaches IG on 0: 0.850 against α 0.800 and IG 0.900" \
        in found[2]
    assert len(found) == 3  # no sanity or failure records: those findings are left out, not invented


def test_a_head_stopped_at_its_epoch_cap_is_marked_and_left_out_of_the_comparison(tmp_path):
    """‡ in the accuracy table with the seeds named; the LAYA-vs-LastLayer finding keeps only converged pairs."""
    _details(tmp_path, ["mlp", "vit"])
    train = json.loads((tmp_path / "train_vit.json").read_text())
    _write(tmp_path, "train_vit.json", {**train, "capped": {"last": [1]}})
    inputs = ReportInputs("Fashion-MNIST", ["mlp", "vit"], tmp_path, heads=["laya", "last"])
    markdown = _markdown(inputs)
    assert "| last | 0.8875 ± 0.0010 | 0.8621 ± 0.0010 ‡ |" in markdown
    assert markdown.count("0.8621 ± 0.0010 ‡") == 2  # the heads table and the protocol table
    assert "stopped at its epoch cap while still improving" in markdown and "vit last (seeds 1)" in markdown
    accuracy = findings(inputs)[0]
    assert "`mlp` +1.00" in accuracy and "`vit` +" not in accuracy
    assert "Left out, a head stopped at its epoch cap before converging: `vit`." in accuracy


def test_the_probe_section_shows_each_layer_s_probe_and_each_method_s_agreement(tmp_path):
    """Layers in depth order (blocks.2 before blocks.10), a seed's spread, agreement per explained head."""
    _details(tmp_path, ["mlp"])
    train = json.loads((tmp_path / "train_mlp.json").read_text())
    probe = {f"blocks.{i}": {"mean": 0.5 + i / 100, "std": 0.001, "seeds": {"s0": 0.5, "s1": 0.5}} for i in (10, 2)}
    _write(tmp_path, "train_mlp.json", {**train, "layer_accuracy": {"probe": probe}})
    _evaluate(tmp_path)
    evaluation = json.loads((tmp_path / "evaluate_mlp.json").read_text())
    _write(tmp_path, "evaluate_mlp.json", {**evaluation, "probe_agreement": {"laya": {"intrinsic": 0.123,
                                                                                     "ig": None}}})
    markdown = _markdown(ReportInputs("Fashion-MNIST", ["mlp"], tmp_path, heads=["laya", "last"]))
    assert "## Per-layer probes" in markdown
    assert "| mlp | 0.5200 ± 0.0010 (blocks.2) | 0.6000 ± 0.0010 (blocks.10) |" in markdown
    assert "| mlp | laya | 0.123 | — | — | — |" in markdown  # intrinsic, lrp_delta, ig (undefined), loo


def test_no_probe_section_without_probes(tmp_path):
    _details(tmp_path, ["mlp"])
    assert "Per-layer probes" not in _markdown(ReportInputs("Fashion-MNIST", ["mlp"], tmp_path, heads=["laya"]))


def test_the_probe_finding_says_whether_alpha_repeats_the_probes(tmp_path):
    _details(tmp_path, ["mlp"])
    _evaluate(tmp_path)
    evaluation = json.loads((tmp_path / "evaluate_mlp.json").read_text())
    pair = {"laya": {**PAIR["laya"], "probe": 0.555}}
    _write(tmp_path, "evaluate_mlp.json", {
        **evaluation, "faithfulness": pair, "faithfulness_std": {"laya": dict.fromkeys(pair["laya"], 0.0)},
        "probe_agreement": {"laya": {"intrinsic": 0.321}}})
    found = [f for f in findings(ReportInputs("Fashion-MNIST", ["mlp"], tmp_path, heads=["laya"]))
             if f.startswith("**More than a probe.**")]
    assert found == ["**More than a probe.** α against a linear probe per layer (p_c of each layer's own probe): "
                     "mean Spearman per input 0.321 — on every backbone α says more than which layer alone can decode "
                     "the class. The probes' own ranking of layers has faithfulness 0.555 against α's 0.766."]
