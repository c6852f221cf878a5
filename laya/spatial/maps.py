"""One spatial map per layer the head reads, for each input's target class c (y_c: the head's logit, live).

gradcam — convolutional layers A_l (B, K, h, w), Captum's LayerGradCam:
    M_l = ReLU(Σ_k w_k A_l[k]),  w_k = mean_ij ∂y_c/∂A_l[k, i, j]                                   (h, w)
attention — ViT blocks, the gradient-weighted attention of the token the cache pools (Chefer et al. 2021, per block):
    M_l = mean_heads ReLU(∂y_c/∂P_l ⊙ P_l)[q, patches]                                             (gh, gw)
    P_l (B, heads, N, N): block l's attention probabilities; q = the CLS row (pooling cls) or the mean of the
    patch rows (pooling mean); patches reshaped to the patch grid.
"""

from __future__ import annotations

from contextlib import contextmanager

import torch

from laya.spatial.live import LiveModel

KINDS = ("gradcam", "attention")


def map_kind(live: LiveModel, images: torch.Tensor) -> str | None:
    """'attention' for a timm-style ViT, 'gradcam' when every layer the head reads is a (B, K, h, w) map, else
    None (an MLP's layers have no spatial axes)."""
    if live.is_vit:
        return "attention"
    shapes = []

    def record(_module, _inputs, output):
        shapes.append(output.ndim)

    handles = [live.module(name).register_forward_hook(record) for name in live.layer_names]
    try:
        with torch.no_grad():
            live.logits(images[:1])
    finally:
        for handle in handles:
            handle.remove()
    return "gradcam" if shapes and all(n == 4 for n in shapes) else None


def layer_maps(live: LiveModel, images: torch.Tensor, target: torch.Tensor, kind: str) -> list[torch.Tensor]:
    """L maps (B, h_l, w_l) of `images` (B, H, W, C) for classes `target` (B,), in the head's layer order."""
    if kind == "gradcam":
        return gradcam_maps(live, images, target)
    if kind == "attention":
        return attention_maps(live, images, target)
    raise ValueError(f"unknown map kind {kind!r}; valid: {list(KINDS)}")


def gradcam_maps(live: LiveModel, images: torch.Tensor, target: torch.Tensor) -> list[torch.Tensor]:
    from captum.attr import LayerGradCam  # imported here: seconds to import, and only CNNs need it

    return [LayerGradCam(live.logits, live.module(name)).attribute(images, target=target, relu_attributions=True)
            [:, 0].detach() for name in live.layer_names]


@contextmanager
def recorded_attention(blocks: list[torch.nn.Module]):
    """Yield a list that fills with each block's attention probabilities (B, heads, N, N) as the forward pass
    reaches it: timm's unfused attention path is switched on for the duration (same values, probabilities made
    visible at `attn.attn_drop`)."""
    probs: list[torch.Tensor] = []
    fused = [block.attn.fused_attn for block in blocks]
    handles = [block.attn.attn_drop.register_forward_hook(lambda _m, _i, out: probs.append(out))
               for block in blocks]
    for block in blocks:
        block.attn.fused_attn = False
    try:
        yield probs
    finally:
        for block, was in zip(blocks, fused):
            block.attn.fused_attn = was
        for handle in handles:
            handle.remove()


def attention_maps(live: LiveModel, images: torch.Tensor, target: torch.Tensor) -> list[torch.Tensor]:
    model = live.backbone
    prefix = int(model.num_prefix_tokens)
    grid = tuple(model.patch_embed.grid_size)
    with torch.enable_grad(), recorded_attention([live.module(name) for name in live.layer_names]) as probs:
        logits = live.logits(images)
        grads = torch.autograd.grad(logits.gather(1, target[:, None]).sum(), probs)
    maps = []
    for p, g in zip(probs, grads):
        relevance = (g * p).clamp(min=0).mean(1)  # (B, N, N): mean over heads
        rows = relevance[:, :1] if live.pooling == "cls" and prefix > 0 else relevance[:, prefix:]
        maps.append(rows.mean(1)[:, prefix:].reshape(len(images), *grid).detach())  # (B, gh, gw)
    return maps
