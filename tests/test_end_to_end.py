"""`dvc repro` of the real pipeline on a tiny subset of real Fashion-MNIST, in a copy of the repo."""

import json
import subprocess
from pathlib import Path

import pytest
import torch
import yaml

from conftest import REPO, needs, pipeline_repo, run_ok
from laya import FeatureStore
from laya.backbones import load_backbone
from laya.clt import load_clt, load_tokens
from laya.core.io import read_json
from laya.data import PreparedData
from laya.data.fashion_mnist import DEBIAN_ROOT
from laya.evaluate.explain import validate
from laya.report import ReportInputs, findings_markdown, report_blocks, results_pages

pytestmark = needs((DEBIAN_ROOT / "train-images-idx3-ubyte.gz").is_file(),
                   f"Debian's dataset-fashion-mnist under {DEBIAN_ROOT} (make setup installs it)")


def _merge(base: dict, override: dict) -> dict:
    for key, value in override.items():
        base[key] = _merge(base.get(key, {}), value) if isinstance(value, dict) else value
    return base


NAMES = ("mlp", "vit", "mlp_joint", "vit_transfer")  # the smoke run's backbones: every protocol, the CLT's vit and
# the ViT whose entry has clt_compare: true (CNNs: test_backbones, test_spatial)
DEPTH = ("mlp",)  # the smoke run's entries with depth: true
# the guide's `dvc exp show` recipes, run as written (after the experiment below)
GUIDE_RECIPES = [line[2:] for line in (REPO / "docs" / "guide" / "experiments.md").read_text().splitlines()
                  if line.startswith("$ dvc exp show")]


def sanity_lrp(repo: Path, name: str) -> float:
    """Spearman of the LAYA head's LRP before and after its classifier is re-initialised (stage sanity@<name>)."""
    return read_json(repo / "reports" / "details" / f"sanity_{name}.json")["heads"]["laya"]["model_randomisation"][
        "lrp"]["classifier"]


def _stages_run(log: str) -> set[str]:
    return {line.split("'")[1] for line in log.splitlines() if line.startswith("Running stage")}


def _tree_digest(repo: Path) -> dict[str, str]:
    """SHA-256 of every file a stage wrote (data/ and reports/)."""
    import hashlib

    return {str(p.relative_to(repo)): hashlib.sha256(p.read_bytes()).hexdigest()
            for top in ("data", "reports") for p in sorted((repo / top).rglob("*"))
            if p.is_file() and p.name != "params.ok"}  # the check's own stamp: DVC removes it before rerunning it


def test_dvc_repro_smoke(tmp_path):
    repo = tmp_path / "laya"
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    _merge(params, yaml.safe_load((REPO / "tests" / "smoke_params.yaml").read_text()))
    params["backbones"] = {name: params["backbones"][name] for name in NAMES}
    env = pipeline_repo(repo, params)

    run_ok(["dvc", "repro"], repo, env)

    prepared = PreparedData(repo / "data" / "prepared" / "fashion_mnist.zarr")
    for name, unit in (("mlp", ""), ("vit", ""), ("mlp_joint", "seed0")):
        card = read_json(repo / "data" / "backbones" / name / unit / "config.json")
        if unit == "":  # the recorded test accuracy is the saved weights' own: recomputed here with plain torch
            model, loaded = load_backbone(repo / "data" / "backbones" / name)
            with torch.no_grad():
                logits = model(loaded.preprocess()(torch.from_numpy(prepared.images("test"))))
            assert card["test_accuracy"] == (logits.argmax(1).numpy() == prepared.labels("test")).mean()
        store = FeatureStore.open(repo / "data" / "features" / f"{name}.zarr" / unit)
        assert [store.num_samples(s) for s in ("train", "val", "test")] == [400, 400, 400]
        assert store.check_fingerprint(backbone_sha256=card["weights_sha256"]) is None
    transfer = FeatureStore.open(repo / "data" / "features" / "vit_transfer.zarr")
    pretrained = read_json(repo / "data" / "backbones" / "vit_transfer" / "config.json")["classes"]
    assert len(transfer.info.classes) == len(pretrained) == 5 and not set(transfer.info.classes) & set(pretrained)
    for split in ("train", "val", "test"):
        assert 0 < transfer.num_samples(split) < 400
    assert len(FeatureStore.open(repo / "data" / "features" / "mlp.zarr").dims) == 3
    vit = FeatureStore.open(repo / "data" / "features" / "vit.zarr")
    assert len(vit.layers) == 6 and vit.attrs["mlp_io"]
    assert vit.array("test", "mlp_out_patch").shape == (400, 4, 6, 64)

    heads = {"mlp": {"laya_aligned"}, "mlp_joint": {"laya_joint"}}  # the mlp entry's heads, the joint protocol's
    for name in NAMES:
        trained = read_json(repo / "reports" / "details" / f"train_{name}.json")
        accuracy = trained["accuracy"]
        assert set(accuracy) == {"last", "concat", "scalarmix", "laya", "alf", "probe"} | heads.get(name, set())
        assert set(trained["layer_accuracy"]) == {"probe"}  # each layer's own probe
        assert all(set(acc["seeds"]) == {"s0"} for acc in accuracy.values())
        assert (repo / "data" / "heads" / name / "laya" / "seed0" / "model.safetensors").is_file()
        evaluation = read_json(repo / "reports" / "details" / f"evaluate_{name}.json")
        # random layer rankings are uncorrelated with the LOO effects: within 4 standard errors of 0 (400 inputs)
        assert abs(evaluation["faithfulness"]["laya"]["random"]) < 4 / 400 ** 0.5
        assert "intrinsic" in evaluation["faithfulness"]["scalarmix"]
        assert set(trained["layer_accuracy"]["probe"]) == set(evaluation["ablated_accuracy"]["laya"])
        assert -1 <= evaluation["probe_agreement"]["laya"]["intrinsic"] <= 1  # α against the per-layer probes
        timings = read_json(repo / "reports" / "timings" / f"evaluate_{name}.json")  # a log, not a DVC output
        assert timings["ms_per_explanation"]["laya"]["ig"] > 0
        payloads = (repo / "reports" / "explanations" / f"{name}.jsonl").read_text().splitlines()
        assert len(payloads) == 10
        for line in payloads:
            validate(json.loads(line))
        relevance = json.loads(payloads[0])["explanation"]["relevance"]  # LRP beside α in every payload
        assert set(relevance) == {"lrp", "lrp_delta"} and len(relevance["lrp"]) == len(evaluation["ablated_accuracy"]
                                                                                       ["laya"])
        assert sanity_lrp(repo, name) < 1.0  # unlike α, LRP changes when the classifier is re-initialised
        assert (repo / "reports" / "figures" / name / "alpha_by_class.png").stat().st_size > 10_000
        sanity = read_json(repo / "reports" / "details" / f"sanity_{name}.json")["heads"]
        assert sanity["laya"]["model_randomisation"]["intrinsic"]["classifier"] == 1.0  # α ignores the classifier
        assert (repo / "reports" / "figures" / f"sanity_{name}.png").stat().st_size > 10_000
        failure = evaluation["failure_detection"]
        tested = FeatureStore.open(repo / "data" / "features" / f"{name}.zarr" / ("seed0" if "joint" in name else ""))
        wrong = (1 - evaluation["accuracy"]["laya"]) * tested.num_samples("test")  # the head's own accuracy
        assert failure["head"] == "laya" and failure["test_errors"] == pytest.approx(wrong, abs=0.01)
        assert (repo / "reports" / "figures" / name / "failure_roc.png").stat().st_size > 10_000
        spatial = evaluation.get("spatial")  # maps per layer: the backbones whose layers have spatial axes
        assert (spatial is None) == name.startswith("mlp"), name
        if spatial is not None:
            assert spatial["kind"] == "attention"  # CNNs' Grad-CAM: tests/test_spatial.py
            assert set(spatial["drop"]) == {"alpha", "uniform", "last", "random"} and spatial["inputs"] == 10
            assert json.loads(payloads[0])["explanation"]["spatial"]["method"] == spatial["kind"]
            assert len(list((repo / "reports" / "figures" / name / "where").glob("test_*.png"))) == 4
        shifts = read_json(repo / "reports" / "depth" / f"{name}.json")["alpha_shift_by_class"]
        assert len(shifts) == len(read_json(repo / "reports" / "depth" / f"{name}.json")["classes"])
    for name in set(NAMES) - set(DEPTH):  # an entry with depth: false records that the stage did not run
        assert read_json(repo / "reports" / "details" / f"depth_{name}.json") == {
            "not_run": f"backbones.{name}.depth is false"}
    assert read_json(repo / "reports" / "details" / "clt_compare_mlp.json") == {
        "not_run": "backbones.mlp.clt_compare is false"}
    for name in DEPTH:
        depth = read_json(repo / "reports" / "details" / f"depth_{name}.json")
        assert set(depth["pruning"]["curves"]) == {"alpha", "scalarmix", "loo", "random0"}
        assert depth["flops"] == sorted(depth["flops"]) and depth["flops"][0] > 0
        assert set(depth["early_exit"]["rules"]) == {"msp", "calibrated", "alpha"}
        for figure in ("pruning.png", "early_exit.png"):
            assert (repo / "reports" / "figures" / f"depth_{name}" / figure).stat().st_size > 10_000
    sanity_heads = read_json(repo / "reports" / "details" / "sanity_mlp_joint.json")["heads"]
    assert set(sanity_heads) == {"laya", "laya_joint", "alf"}
    aligned = read_json(repo / "reports" / "details" / "evaluate_mlp.json")
    assert aligned["cross_ablation"]["ablation"] == "zero" and "ig" in aligned["cross_ablation"]["faithfulness"][
        "laya_aligned"]
    clt = read_json(repo / "reports" / "details" / "clt.json")
    assert set(clt["cls"]["per_layer"]["r2"]) == set(vit.layers)
    # the recorded R² per block is the saved CLT's on the test CLS tokens, recomputed here in numpy
    transcoder, tokens = load_clt(repo / "data" / "clt"), load_tokens(vit, "test", "cls")
    with torch.no_grad():
        y = tokens.y.float().numpy()
        y_hat = transcoder(transcoder.encoder_input(tokens.x.float(), tokens.y.float())).y.numpy()
    r2 = 1 - ((y - y_hat) ** 2).sum((0, 2)) / ((y - y.mean(0)) ** 2).sum((0, 2))
    assert list(clt["cls"]["per_layer"]["r2"].values()) == pytest.approx(r2, abs=1e-4)
    assert transfer.attrs["mlp_io"]  # its entry's clt_compare: its cache holds the MLP inputs/outputs too
    for found in (clt, read_json(repo / "reports" / "details" / "clt_compare_vit_transfer.json")):
        shares = found["asymmetry"]
        assert shares["cls"]["ci95"][0] <= shares["cls"]["mean"] <= shares["cls"]["ci95"][1] and shares["images"] > 0
    assert clt["replacement"]["original"] == pytest.approx(
        read_json(repo / "reports" / "details" / "backbone_vit.json")["test_accuracy"], abs=1e-9)
    assert (repo / "data" / "clt" / "model.safetensors").is_file()
    assert (repo / "reports" / "figures" / "clt" / "contributions_patch.png").stat().st_size > 10_000
    frontier = read_json(repo / "reports" / "details" / "clt_frontier.json")
    assert {"relu_topk_k4", "abs_topk_k16", "jumprelu_l0.01"} <= set(frontier)
    report = (repo / "docs" / "results" / "report.md").read_text()
    assert "| vit_transfer | " in report.split("## Cross-layer transcoder")[1]  # the asymmetry table names it
    assert "| laya |" in report and "| laya | ig |" in report and "| relu_topk_k16 |" in report
    assert "| mlp_joint | mlp | joint | 1 |" in report and "| vit_transfer | vit | transfer | 1 |" in report
    assert "| mlp | laya | intrinsic | 1.000 |" in report  # the sanity table
    assert "## Failure detection" in report and "| mlp | alpha |" in report  # the early-exit table (depth@mlp)
    assert "(Fashion-MNIST test split)" in report
    assert "](../../reports/figures/vit/methods.png)" in report  # links that work on a Git host (the site maps them)
    assert (repo / "reports" / "index.html").stat().st_size > 100_000
    headline = read_json(repo / "reports" / "metrics" / "mlp.json")
    train = read_json(repo / "reports" / "details" / "train_mlp.json")["accuracy"]
    assert headline["acc"]["laya"] == train["laya"]["mean"] and headline["acc"]["last"] == train["last"]["mean"]
    shown = run_ok(["dvc", "metrics", "show"], repo, env)
    assert max(map(len, shown.splitlines())) <= 200, shown  # one row per backbone, readable in a terminal
    assert len(shown.splitlines()) == len(NAMES) + 2  # the header, each backbone, clt
    assert sorted(p.name for p in (repo / "reports" / "plots").rglob("*.csv")) == sorted(
        [f"{n}.csv" for n in NAMES] * 3 + ["frontier.csv"])
    card = read_json(repo / "data" / "backbones" / "mlp" / "config.json")
    assert card["kind"] == "backbone" and "seconds" not in json.dumps(card)  # nothing that varies run to run

    again = run_ok(["dvc", "repro"], repo, env)
    assert "Data and pipelines are up to date" in again, again
    status = run_ok(["dvc", "status"], repo, env)
    assert "up to date" in status, status

    git_commit = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm"]
    run_ok(["git", "add", "-A"], repo, env)
    run_ok([*git_commit, "baseline results"], repo, env)

    # a failure at run time (a damaged cache shard) comes after DVC has deleted the stage's outputs; the README's
    # one command restores every output, byte for byte (the shard too: DVC's cache holds the good copy)
    before = _tree_digest(repo)
    shard = next(p for p in sorted((repo / "data" / "features" / "mlp.zarr" / "train" / "layers").rglob("*"))
                 if p.is_file() and p.name != "zarr.json")
    damaged = shard.read_bytes()[: shard.stat().st_size // 2]
    shard.unlink()  # a new file: never write through a link into DVC's cache
    shard.write_bytes(damaged)
    failed = subprocess.run(["dvc", "repro", "-s", "train@mlp"], cwd=repo, env=env, capture_output=True, text=True)
    assert failed.returncode != 0 and "is damaged" in failed.stdout + failed.stderr, failed
    assert _tree_digest(repo) != before
    run_ok(["bash", "-c", "git checkout -- reports && dvc checkout --force"], repo, env)
    assert _tree_digest(repo) == before
    assert "up to date" in run_ok(["dvc", "status"], repo, env)

    # a bad value fails in `check`, before DVC deletes any stage's outputs: everything built survives, byte for byte
    good = (repo / "params.yaml").read_text()
    params = yaml.safe_load(good)
    params["heads"]["laya"]["tau"] = "abc"
    (repo / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    bad = subprocess.run(["dvc", "repro"], cwd=repo, env=env, capture_output=True, text=True)
    assert bad.returncode != 0 and "heads.laya.tau: expected a number, got 'abc'" in bad.stdout + bad.stderr, bad
    assert _stages_run(bad.stdout) == {"check"}, bad.stdout
    (repo / "params.yaml").write_text(good)
    assert _tree_digest(repo) == before
    healed = run_ok(["dvc", "repro"], repo, env)  # only the check's stamp was removed: nothing else reruns
    assert _stages_run(healed) <= {"check"} and (repo / "data" / "params.ok").is_file(), healed

    # an ablation reruns only the stages that read its key: the CLT's activation the two CLT stages and the
    # report, not the frontier, the heads or the caches (one small experiment keeps the smoke run short; which
    # stages read each params section is tests/test_dvc_yaml's, e.g. evaluate.* → evaluate, sanity and report)
    report_before = (repo / "docs" / "results" / "report.md").read_text()
    exp = run_ok(["dvc", "exp", "run", "-S", "clt.activation=abs_topk"], repo, env)
    # (clt_compare@<name> of every entry reads `clt`; those with clt_compare: false only record that they did not run)
    assert _stages_run(exp) == {"check", "clt", "report", *(f"clt_compare@{name}" for name in NAMES)}, exp
    diff = run_ok(["dvc", "metrics", "diff", "--targets", "reports/metrics/mlp.json", "reports/metrics/clt.json"],
                repo, env)
    assert "clt.r2" in diff and "reports/metrics/mlp.json" not in diff and "seeds" not in diff, diff
    # the numbers a reader meets follow the experiment: the results pages and the README's findings are the new
    # records' own (the report stage rewrote them)
    inputs = ReportInputs.from_params(yaml.safe_load((repo / "params.yaml").read_text()), repo / "reports" / "details",
                                      repo / "reports" / "curves", repo / "reports" / "figures", len(prepared.classes))
    pages = results_pages(inputs, report_blocks(inputs), repo / "docs" / "results")
    assert {name: (repo / "docs" / "results" / name).read_text() for name in pages} == pages
    assert pages["report.md"] != report_before and findings_markdown(inputs) in (repo / "README.md").read_text()
    assert len(GUIDE_RECIPES) >= 3
    for recipe in GUIDE_RECIPES:  # the guide's comparison commands, as printed there, fit 120 columns
        shown = run_ok(["bash", "-c", recipe], repo, {**env, "COLUMNS": "120"})
        lines = shown.splitlines()
        assert lines and max(map(len, lines)) <= 120 and "…" not in shown and "workspace" in shown, (recipe, shown)

    # a typo'd section that no stage reads fails `dvc repro` (stage `check`) instead of "up to date"
    params = yaml.safe_load((repo / "params.yaml").read_text())
    (repo / "params.yaml").write_text(yaml.safe_dump({**params, "trian": {"epochs": 3}}, sort_keys=False))
    typo = subprocess.run(["dvc", "repro"], cwd=repo, env=env, capture_output=True, text=True)
    assert typo.returncode != 0 and "unknown top-level section(s) ['trian']" in typo.stderr + typo.stdout, typo
