"""The guide's own-model recipe, run as printed: timm resnet18 and a 12-block timm ViT (random init, no hub) on a
generated ImageFolder of three classes, one seed — `dvc repro` in a copy of the repo, then the report read as the
user reads it."""

import re
from pathlib import Path

import numpy as np
import yaml
from PIL import Image

from conftest import REPO, pipeline_repo, run_ok

GUIDE = REPO / "docs" / "guide" / "own-data.md"
CLASSES = ("circle", "square", "stripes")


def recipe() -> dict:
    """The YAML block of the guide's own-model section, exactly as printed."""
    section = GUIDE.read_text().split("## Your own timm model and ImageFolder data", 1)[1]
    return yaml.safe_load(re.search(r"```yaml\n(.*?)```", section, re.S).group(1))


def image_folder(root: Path, per_class: int = 16, side: int = 32) -> Path:
    """root/<class>/<n>.png: a shape per class on seeded noise, all of one size (the recipe's image_size: null)."""
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[:side, :side]
    shapes = {"circle": (yy - side / 2) ** 2 + (xx - side / 2) ** 2 < (side / 3) ** 2,
              "square": (abs(yy - side / 2) < side / 4) & (abs(xx - side / 2) < side / 4),
              "stripes": (xx // 4) % 2 == 0}
    for name in CLASSES:
        (root / name).mkdir(parents=True)
        for n in range(per_class):
            pixels = rng.integers(0, 90, (side, side, 3)).astype(np.uint8)
            pixels[shapes[name]] += 150
            Image.fromarray(pixels).save(root / name / f"{n}.png")
    return root


def test_the_own_model_recipe_runs_as_printed(tmp_path):
    repo = tmp_path / "laya"
    changes = recipe()
    changes["data"]["root"] = str(image_folder(tmp_path / "images"))  # the one line a user writes for their data
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    for section, values in changes.items():  # `backbones` replaced, every other section merged key by key
        params[section] = values if section == "backbones" else {**params[section], **values}
    env = pipeline_repo(repo, params)

    run_ok(["dvc", "repro"], repo, env)

    report = (repo / "docs" / "results" / "report.md").read_text()
    ablated = next(line for line in report.splitlines() if line.startswith("| vit | laya |"))
    blocks = re.findall(r"\(blocks\.(\d+)\)", ablated)
    assert blocks == [str(i) for i in range(12)], ablated  # depth order, not blocks.10 after blocks.1
    assert "| resnet | timm:resnet18 | frozen |" in report and "| vit | timm:vit_tiny_patch16_224 | frozen |" in report
    assert "Chance accuracy: 1/3 for frozen and joint entries." in report  # from the data's three classes
    assert "± 0.0000" not in report and "1/10" not in report
    findings = (repo / "README.md").read_text().split("<!-- /findings -->")[0]
    assert "`resnet`" in findings and "`vit`" in findings  # the README's findings are this run's
    shown = run_ok(["dvc", "metrics", "show"], repo, env).splitlines()
    assert len(shown) == 4 and max(map(len, shown)) <= 200  # the header, resnet, vit, clt
