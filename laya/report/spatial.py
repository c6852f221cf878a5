"""The "where and at which depth" table (evaluate@<name>'s `spatial`): does deleting the cells an α-weighted map
ranks highest drop the prediction more than deleting random cells, or than the standard one-layer map?"""

from __future__ import annotations

from laya.report.document import Block, Table
from laya.report.inputs import ReportInputs

SCORES = {"alpha": "α-weighted", "uniform": "uniform mean", "last": "last layer (standard)",
          "lrp": "LRP pixel relevance", "random": "random cells"}
KINDS = {"gradcam": "Grad-CAM", "attention": "CLS attention × gradient"}

SPATIAL_TEXT = (
    "A map per layer for the first explained test inputs, from the frozen backbone run live and the explained "
    "head's logit of its predicted class c: Grad-CAM per CNN block (Captum's LayerGradCam), and for a ViT the "
    "gradient-weighted attention of the CLS token per block. Each map is upsampled to the input's pixels and "
    "scaled to max 1; the α-weighted map is Σ_l α_l(x) · map_l, beside their uniform mean and the last layer's "
    "map alone (standard Grad-CAM). For the CNN, LRP as well (zennit's EpsilonPlusFlat, BatchNorm merged into "
    "its convolution): the explained logit's relevance from the head's exact per-layer terms down through the "
    "backbone to the pixels (ViTs: `lxt`'s AttnLRP patches torchvision's and Hugging Face's attention, not timm's, "
    "so they keep the gradient-weighted attention). The check zeroes the top share of pixels of each map, or as "
    "many random pixels, and reports the mean drop of p_c (± standard error over the inputs) and how often each "
    "map's drop beats the random pixels' (mean over the random draws) on the same input.")


def spatial_table(inputs: ReportInputs) -> list[Block]:
    rows = []
    for name in inputs.backbones:
        e = inputs.evaluate(name)
        if e is None or e.spatial is None:
            continue
        s = e.spatial
        rows.append([name, KINDS.get(s.kind, s.kind), str(s.inputs), f"{s.cells_deleted}/{s.cells}",
                     *(f"{s.drop[k]:.3f} ± {s.drop_sem[k]:.3f}" if k in s.drop else "—" for k in SCORES),
                     *(f"{s.beats_random[k]:.2f}" if k in s.beats_random else "—" for k in SCORES if k != "random")])
    if not rows:
        return []
    return [SPATIAL_TEXT,
            Table(["backbone", "maps", "inputs", "pixels deleted", *(f"drop {v}" for v in SCORES.values()),
                   *(f"beats random: {v}" for k, v in SCORES.items() if k != "random")], rows)]

