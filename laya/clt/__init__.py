"""Cross-layer transcoders (arXiv 2604.13304): sparse, causal stand-ins for a ViT's MLP blocks, trained from
the feature cache; reconstruction metrics, replacement accuracy and layer-to-layer contribution scores."""

from laya.clt.activations import ACTIVATIONS
from laya.clt.card import load_clt, save_clt
from laya.clt.config import TOKEN_KINDS, CLTConfig, FrontierConfig
from laya.clt.model import CrossLayerTranscoder, contribution_shares
from laya.clt.tokens import Tokens, load_tokens

__all__ = ["ACTIVATIONS", "CLTConfig", "CrossLayerTranscoder", "FrontierConfig", "TOKEN_KINDS", "Tokens",
           "contribution_shares", "load_clt", "load_tokens", "save_clt"]
