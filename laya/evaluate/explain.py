"""WIA-AI-009 local explanations: one JSON payload per explained test input, α(x) beside its LOO check.

Confidence levels from the predicted class's probability p: low p < t_low, medium t_low ≤ p < t_high,
high p ≥ t_high (params evaluate.confidence, default [0.6, 0.9]). Payloads are deterministic: the
explanation_id is a UUID-5 of (backbone, cache fingerprint, test row), and no wall-clock time is stored.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import numpy as np

import laya
from laya.evaluate.faithfulness import spearman_rows
from laya.evaluate.methods import INTRINSIC, LRP
from laya.evaluate.scores import Evaluation
from laya.heads import HeadCard

SCHEMA_PATH = Path(__file__).with_name("wia_ai_009.schema.json")
NAMESPACE = uuid.UUID("6f1c1d52-2b0e-4c39-9a55-6c9d1c0e0a09")
MODEL_TYPES = {"laya": "LAYA head", "scalarmix": "ScalarMix head"}


def confidence_level(probability: float, thresholds: list[float]) -> str:
    low, high = thresholds
    return "low" if probability < low else "medium" if probability < high else "high"


def explanations(ev: Evaluation, backbone: str, card: HeadCard, fingerprint: str, ablation: str,
                 count: int, thresholds: list[float], spatial=None, top_cells: int = 5) -> list[dict]:
    """Payloads for the first `count` evaluated test inputs: the head of `card`'s own layer weights α(x)
    (its `intrinsic` attribution) beside its LOO effects; with `spatial` (laya.spatial.explanations.SpatialResult of
    the same rows), each layer's map summarised as its shape and `top_cells` highest cells."""
    head = card.name
    alpha, effects, probs = ev.attributions[(INTRINSIC, head)], ev.effects[head], ev.probs[head]
    rho = spearman_rows(alpha[:count], effects[:count])
    payloads = []
    for row in range(min(count, len(ev.labels))):
        predicted = int(probs[row].argmax())
        probability = float(probs[row, predicted])
        index = int(ev.index[row])
        payloads.append({
            "standard": "WIA-AI-009",
            "version": "1.0",
            "explanation_id": str(uuid.uuid5(NAMESPACE, f"{backbone}/{fingerprint}/test/{index}")),
            "explanation_type": "local",
            "method": "attention",
            "model_info": {"model_id": f"{head}-{backbone}-seed{card.seed}", "model_type": MODEL_TYPES.get(head, head),
                           "model_version": laya.__version__, "framework": "pytorch"},
            "model_architecture": {"backbone": backbone, "head": head, "layers": ev.layers,
                                   "dims": card.dims, **card.params},
            "input": {"id": f"test/{index}", "split": "test", "index": index,
                      "true_label": {"index": int(ev.labels[row]), "class": ev.classes[int(ev.labels[row])]}},
            "prediction": {"value": predicted, "class": ev.classes[predicted], "probability": round(probability, 6),
                           "confidence": confidence_level(probability, thresholds)},
            "explanation": {
                "attention_weights": {name: round(float(a), 6) for name, a in zip(ev.layers, alpha[row])},
                "validation": {"loo_effects": {name: round(float(e), 6) for name, e in zip(ev.layers, effects[row])},
                               "ablation": ablation,
                               "spearman": None if np.isnan(rho[row]) else round(float(rho[row]), 6)},
                **({"relevance": relevance(ev, head, row)} if relevance(ev, head, row) else {}),
                **({"spatial": spatial.payload_entry(row, top_cells)}
                   if spatial is not None and row < len(spatial.target) else {}),
            },
            "metadata": {"cache_fingerprint": fingerprint,
                         "confidence_thresholds": {"low": f"p < {thresholds[0]}",
                                                   "medium": f"{thresholds[0]} ≤ p < {thresholds[1]}",
                                                   "high": f"p ≥ {thresholds[1]}"}},
        })
    return payloads


def relevance(ev: Evaluation, head: str, row: int) -> dict[str, dict[str, float]]:
    """{method: {layer: relevance}} of the LRP methods evaluated on `head` (laya.evaluate.methods: each layer's term
    of the explained logit, and that term over its ablation value); empty when none was."""
    return {method: {name: round(float(r), 6) for name, r in zip(ev.layers, ev.attributions[(method, head)][row])}
            for method in LRP if (method, head) in ev.attributions}


def load_schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text())


def payload_validator(schema: dict | None = None):
    """A jsonschema validator for the payloads (default: the WIA-AI-009 schema), its schema checked once: build one
    per batch of payloads (`jsonschema.validate` re-checks the schema on every call, ~50 ms here)."""
    import jsonschema

    schema = schema or load_schema()
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def validate(payload: dict, schema: dict | None = None) -> None:
    """Raise jsonschema.ValidationError when `payload` does not follow the schema."""
    payload_validator(schema).validate(payload)
