"""Spatial maps per layer (laya.spatial) on hand-set models where the answer is known."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from laya.backbones.cnn import CNNBackbone, CNNConfig
from laya.backbones.intermediates import BlockStack
from laya.backbones.mlp import MLPBackbone, MLPConfig
from laya.core.config import ConfigError, from_dict
from laya.evaluate import EvaluateConfig
from laya.evaluate.explain import load_schema, validate
from laya.heads import build
from laya.images import Preprocess
from laya.spatial.config import SpatialConfig
from laya.spatial.deletion import probability_drop, random_cells, top_cells, upsampled
from laya.spatial.explanations import spatial_explanations
from laya.spatial.live import LiveModel
from laya.spatial.lrp import lrp_maps, pooled_relevance
from laya.spatial.maps import layer_maps, map_kind, recorded_attention

SIDE = 8
CELL = (5, 2)  # the one cell the hand-set model's logit reads


class OneCell(nn.Module):
    """Keeps cell CELL of each channel and zeroes the rest: everything after it depends on that cell only."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mask = torch.zeros_like(x)
        mask[..., CELL[0], CELL[1]] = 1
        return x * mask


class OneCellNet(BlockStack):
    """Block 0: a 1×1 convolution (every cell); block 1: OneCell. GAP of each block is a layer."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Conv2d(1, 2, 1), OneCell()])
        self.head = nn.Identity()


def _one_cell_model(head_name: str = "last") -> LiveModel:
    torch.manual_seed(0)
    net = OneCellNet().eval().requires_grad_(False)
    with torch.no_grad():
        net.blocks[0].weight.copy_(torch.tensor([1.0, 0.5]).view(2, 1, 1, 1))
        net.blocks[0].bias.zero_()
    head = build(head_name, dims=[2, 2], num_classes=2)
    if head_name == "last":
        with torch.no_grad():
            head.classifier.weight.copy_(torch.tensor([[1.0, 1.0], [-1.0, -1.0]]) * 300)  # GAP divides by 64
            head.classifier.bias.zero_()
    return LiveModel(net, Preprocess([0.0], [1.0], SIDE), head.requires_grad_(False), [0, 1], "cls")


def _noise(n: int, seed: int = 1) -> torch.Tensor:
    return torch.from_numpy(np.random.default_rng(seed).integers(30, 255, (n, SIDE, SIDE, 1), dtype=np.uint8))


def test_gradcam_of_a_model_whose_logit_depends_on_one_cell_peaks_there():
    live = _one_cell_model()
    images = _noise(6)
    assert map_kind(live, images) == "gradcam"
    target = torch.zeros(6, dtype=torch.long)  # class 0: its logit rises with the cell's value
    early, one_cell = layer_maps(live, images, target, "gradcam")
    assert one_cell.shape == (6, SIDE, SIDE)
    flat = one_cell.flatten(1)
    assert (flat.argmax(1) == CELL[0] * SIDE + CELL[1]).all()
    assert (flat.sum(1) == flat.amax(1)).all()  # nothing anywhere else
    assert early.flatten(1).count_nonzero(1).min() > 1  # the 1×1 convolution's map covers the whole image


def test_deleting_the_top_cells_of_that_map_removes_the_evidence_and_random_cells_rarely_do():
    live = _one_cell_model()
    images = _noise(20)
    probs, _ = live.outputs(images)
    target = probs.argmax(1)
    before = probs.gather(1, target[:, None])[:, 0]
    maps = upsampled(layer_maps(live, images, target, "gradcam"), (SIDE, SIDE))
    top = top_cells(maps[:, -1], 1)
    assert top.sum((1, 2)).tolist() == [1] * 20 and top[:, CELL[0], CELL[1]].all()
    drop = probability_drop(live, images, top, target, before)
    assert torch.allclose(drop, before - 0.5)  # the cell deleted: both logits 0
    rng = np.random.default_rng(0)
    masks = random_cells(5, 20, SIDE, SIDE, 1, rng)
    assert masks.sum((2, 3)).eq(1).all()
    random = torch.stack([probability_drop(live, images, m, target, before) for m in masks]).mean(0)
    assert drop.mean() > random.mean() + 0.2


def _vit(patch: int, img: int):
    from timm.models.vision_transformer import VisionTransformer

    torch.manual_seed(0)
    vit = VisionTransformer(img_size=img, patch_size=patch, in_chans=1, num_classes=3, embed_dim=16, depth=2,
                            num_heads=2).eval().requires_grad_(False)
    with torch.no_grad():
        vit.pos_embed.zero_()
        vit.patch_embed.proj.bias.zero_()
        for block in vit.blocks:
            block.attn.qkv.bias.zero_()
    return vit


def test_the_vit_map_of_a_block_lies_on_the_only_patch_that_carries_signal():
    """Patches left black are zero tokens: their values are 0, so the CLS row's gradient-weighted attention on
    them is exactly 0 in the first block, whatever the class."""
    vit = _vit(4, 12)
    head = build("laya", dims=[16, 16], num_classes=3).requires_grad_(False)
    live = LiveModel(vit, Preprocess([0.0], [1.0], 12), head, [0, 1], "cls")
    images = torch.zeros(2, 12, 12, 1, dtype=torch.uint8)
    images[:, 4:8, 8:12] = torch.tensor([200, 90], dtype=torch.uint8).view(2, 1, 1, 1)  # patch (1, 2) only
    assert map_kind(live, images) == "attention"
    at_patch = []
    for c in range(3):
        first, _ = layer_maps(live, images, torch.full((2,), c), "attention")
        assert first.shape == (2, 3, 3)
        off = first.clone()
        off[:, 1, 2] = 0
        assert off.abs().max() == 0
        at_patch.append(first[:, 1, 2])
    assert torch.stack(at_patch).amax(0).gt(0).all()  # some class draws on it, in each image
    assert all(block.attn.fused_attn == vit.blocks[0].attn.fused_attn for block in vit.blocks)


def test_recorded_attention_restores_timms_fused_path():
    vit = _vit(4, 8)
    fused = [b.attn.fused_attn for b in vit.blocks]
    with recorded_attention(list(vit.blocks)) as probs:
        assert not any(b.attn.fused_attn for b in vit.blocks)
        vit(torch.zeros(1, 1, 8, 8))
    assert [tuple(p.shape) for p in probs] == [(1, 2, 5, 5)] * 2
    assert [b.attn.fused_attn for b in vit.blocks] == fused


def test_an_mlp_has_no_spatial_maps():
    mlp = MLPBackbone(SIDE * SIDE, 2, MLPConfig(hidden=[4, 4])).eval().requires_grad_(False)
    live = LiveModel(mlp, Preprocess([0.0], [1.0], SIDE), build("laya", dims=[4, 4], num_classes=2), [0, 1], "cls")
    assert map_kind(live, _noise(1)) is None


def test_a_cnn_explanation_has_a_map_per_layer_and_its_payload_entry_follows_the_schema():
    torch.manual_seed(0)
    cnn = CNNBackbone(1, 3, CNNConfig(channels=[4, 6, 8], pool_after=[0])).eval().requires_grad_(False)
    head = build("laya", dims=[4, 6, 8], num_classes=3).eval().requires_grad_(False)
    live = LiveModel(cnn, Preprocess([0.3], [0.2], SIDE), head, [0, 1, 2], "cls")
    cfg = SpatialConfig(fraction=0.25, random_masks=3, top_cells=2)
    result = spatial_explanations(live, _noise(5).numpy(), "gradcam", cfg, batch_size=2)
    assert [m.shape for m in result.maps] == [(5, 4, 4)] * 3 and result.cells == 16
    assert np.allclose(result.alpha.sum(1), 1, atol=1e-5)
    metrics = result.metrics(cfg)
    assert set(metrics["drop"]) == {"alpha", "uniform", "last", "lrp", "random"} and metrics["inputs"] == 5
    assert set(metrics["beats_random"]) == {"alpha", "uniform", "last", "lrp"}
    assert [m.shape for m in result.lrp_maps] == [(5, 4, 4)] * 3 and result.scores["lrp"].shape == (5, SIDE, SIDE)
    entry = result.payload_entry(0, 2)
    assert list(entry["layers"]) == ["blocks.0", "blocks.1", "blocks.2"]
    assert entry["layers"]["blocks.0"]["shape"] == [4, 4] and len(entry["alpha_weighted"]["top_cells"]) == 2
    schema = load_schema()
    spatial = schema["properties"]["explanation"]["properties"]["spatial"]
    validate(entry, {"$defs": schema["$defs"], **spatial})
    again = spatial_explanations(live, _noise(5).numpy(), "gradcam", cfg, batch_size=5)
    assert all(np.allclose(a, b, atol=1e-6) for a, b in zip(result.maps, again.maps))  # batching changes nothing


@pytest.mark.parametrize(("spatial", "message"), [
    ({"fraction": 1.5}, "evaluate.spatial.fraction: expected a share in (0, 1)"),
    ({"random_masks": 0}, "evaluate.spatial.random_masks: expected an integer ≥ 1"),
    ({"top": 3}, "evaluate.spatial: unknown key(s) ['top']"),
])
def test_bad_spatial_params_are_one_line(spatial, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        from_dict(EvaluateConfig, {"spatial": spatial}, "evaluate")


def test_lrp_puts_all_relevance_of_the_one_cell_model_on_that_cell_and_conserves_the_logit():
    """The head reads the one cell's block: relevance through the pool (Norm rule), the mask, the 1×1 convolution
    (flat rule) lands on CELL alone, and sums to the explained logit (the classifier has no bias; the rules'
    stabilisers ε = 1e-6 cost < 0.1 %)."""
    live = _one_cell_model()
    images = _noise(3)
    with torch.no_grad():
        logits = live.logits(images)
    target = logits.argmax(1)
    layers, pixels = lrp_maps(live, images, target)
    outside = pixels.clone()
    outside[:, CELL[0], CELL[1]] = 0
    assert (outside == 0).all() and (pixels[:, CELL[0], CELL[1]] != 0).all()
    torch.testing.assert_close(pixels.flatten(1).sum(1), logits.gather(1, target[:, None])[:, 0], rtol=1e-3, atol=0)
    assert [m.shape for m in layers] == [(3, SIDE, SIDE)] * 2


def test_lrp_through_a_cnn_conserves_relevance_and_leaves_its_batchnorm_as_it_was():
    """Each pooled feature's share of its layer's term sums to that term (Concat: no adapter bias); the flat rule
    of the first convolution passes all relevance from block 0 to the pixels; BatchNorm merged only for the pass."""
    torch.manual_seed(0)
    cnn = CNNBackbone(1, 3, CNNConfig(channels=[4, 6, 8], pool_after=[0])).eval().requires_grad_(False)
    with torch.no_grad():
        for bn in (m for m in cnn.modules() if isinstance(m, nn.BatchNorm2d)):
            bn.running_mean.normal_(0, 0.2), bn.running_var.uniform_(0.5, 2), bn.bias.normal_(0, 0.2)
    head = build("concat", dims=[4, 6, 8], num_classes=3).eval().requires_grad_(False)
    live = LiveModel(cnn, Preprocess([0.3], [0.2], SIDE), head, [0, 1, 2], "cls")
    images = _noise(4)
    with torch.no_grad():
        logits = live.logits(images)
    target = logits.argmax(1)
    relevance = pooled_relevance(head, live.layers(images), target)
    torch.testing.assert_close(sum(r.sum(1) for r in relevance) + head.classifier.bias[target],
                               logits.gather(1, target[:, None])[:, 0])
    layers, pixels = lrp_maps(live, images, target)
    torch.testing.assert_close(pixels.flatten(1).sum(1), layers[0].flatten(1).sum(1), rtol=1e-4, atol=1e-6)
    with torch.no_grad():
        torch.testing.assert_close(live.logits(images), logits, rtol=0, atol=0)
    assert pooled_relevance(build("probe", dims=[4, 6, 8], num_classes=3), live.layers(images), target) is None
