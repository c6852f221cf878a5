"""The params.yaml reference, generated: every key from the typed config that parses it (type, default, the
comment beside the field) and the stages that read it (from dvc.yaml's `params` lists).

    keys = params_reference()            # list[Key], in params.yaml's order
    markdown = params_markdown(keys)     # docs/reference/params.md, made by the MkDocs hook at build time
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from laya.backbones.config import MODEL_CONFIGS, BackboneConfig, BackboneEntry, JointConfig
from laya.clt.config import CLTConfig, FrontierConfig
from laya.core.config import RunConfig
from laya.data.config import DataConfig
from laya.depth import DepthConfig
from laya.evaluate.config import EvaluateConfig, SanityConfig
from laya.extract.config import ExtractConfig
from laya.heads import CACHE_HEADS, HEADS
from laya.heads.attention import LAYAConfig
from laya.reference.fields import code_text, fields_of, markdown_text, type_text
from laya.spatial.config import SpatialConfig
from laya.train.config import HeadsConfig, TrainConfig

ENTRY = "backbones.<name>"  # one entry per backbone: its stages are <stage>@<name>


@dataclass(frozen=True)
class Table:
    """One table of the reference: the keys under `prefix`, parsed by `config`."""

    prefix: str  # "" for the top-level keys
    config: type
    title: str
    skip: tuple[str, ...] = ()  # fields that are not params keys (filled in by the parser)
    nested: tuple[str, ...] = ()  # fields whose keys have a table of their own


TABLES = [
    Table("", RunConfig, "Top-level keys"),
    Table("data", DataConfig, "data: the dataset (stage prepare)"),
    Table(ENTRY, BackboneEntry, "backbones.<name>: one entry per backbone", nested=("backbone",)),
    Table(f"{ENTRY}.backbone", BackboneConfig, "backbones.<name>.backbone: architecture, training, protocol",
          nested=("model", "joint")),
    *(Table(f"{ENTRY}.backbone.model", config, f"backbones.<name>.backbone.model, arch: {arch}")
      for arch, config in MODEL_CONFIGS.items()),
    Table(f"{ENTRY}.backbone.joint", JointConfig, "backbones.<name>.backbone.joint: protocol joint's recipe",
          nested=("head",)),
    Table(f"{ENTRY}.backbone.joint.head", LAYAConfig, "backbones.<name>.backbone.joint.head: the co-trained LAYA"),
    Table("extract", ExtractConfig, "extract: the feature cache (stages extract@<name>)"),
    Table("heads", HeadsConfig, "heads: which heads, on which layers (stages train@<name>)", skip=("configs",)),
    *(Table(f"heads.{name}", HEADS[name].config, f"heads.{name}") for name in CACHE_HEADS),
    Table("train", TrainConfig, "train: the heads' recipe (stages train@<name>)"),
    Table("evaluate", EvaluateConfig, "evaluate: layer attributions against leave-one-layer-out",
          nested=("sanity", "spatial")),
    Table("evaluate.sanity", SanityConfig, "evaluate.sanity: the sanity checks (stages sanity@<name>)"),
    Table("evaluate.spatial", SpatialConfig, "evaluate.spatial: where in the image, at which depth"),
    Table("depth", DepthConfig, "depth: pruning and early exit by α (stages depth@<name>)"),
    Table("clt", CLTConfig, "clt: the cross-layer transcoder (stage clt)"),
    Table("clt_frontier", FrontierConfig, "clt_frontier: reconstruction against sparsity (stage clt_frontier)"),
]
NOTES = {  # what a key's comment cannot say because the key is a container of other keys
    f"{ENTRY}.train": "Any key of `train` (below), for this backbone's heads only.",
    f"{ENTRY}.backbone.model": "The architecture's own keys (tables below); for arch timm, keyword arguments of "
                               "`timm.create_model`, with `name`.",
}


@dataclass(frozen=True)
class Key:
    key: str  # dotted; `<name>` stands for a backbone's name
    type: str
    default: str  # as YAML writes it; "required" when the key has no default
    doc: str
    read_by: tuple[str, ...]  # stages whose dvc.yaml params include the key (or a section above it)
    table: str  # the Table's prefix


def params_reference(dvc_yaml: str | Path = "dvc.yaml") -> list[Key]:
    """Every params key the typed configs accept, with the stages that read it."""
    readers = stage_params(dvc_yaml)
    keys = []
    for table in TABLES:
        fields = fields_of(table.config)
        if not fields:  # a section with no keys of its own (e.g. a head without hyper-parameters)
            keys.append(Key(table.prefix, "mapping", "{}", "No keys: nothing to set.",
                            _readers(table.prefix, readers), table.prefix))
        for field in fields:
            if field.name in table.skip:
                continue
            key = f"{table.prefix}.{field.name}" if table.prefix else field.name
            doc = NOTES.get(key, field.doc)
            if field.name in table.nested:
                doc = f"{doc} (keys below)" if doc else "Keys below."
            keys.append(Key(key, type_text(field.type), _yaml(field.default), doc, _readers(key, readers),
                            table.prefix))
    return keys


def stage_params(dvc_yaml: str | Path) -> dict[str, list[str]]:
    """stage → the params keys dvc.yaml tracks for it; a `foreach` stage is `<stage>@<name>` and its `${key}` is
    `<name>`. The check stage (which reads the whole file) is left out: it reads every key."""
    stages = yaml.safe_load(Path(dvc_yaml).read_text())["stages"]
    out = {}
    for stage, spec in stages.items():
        body = spec.get("do", spec)
        name = f"{stage}@<name>" if "foreach" in spec else stage
        tracked = [p for p in body.get("params", []) if isinstance(p, str)]
        if tracked:
            out[name] = [p.replace("${key}", "<name>") for p in tracked]
    return out


def _readers(key: str, readers: dict[str, list[str]]) -> tuple[str, ...]:
    return tuple(stage for stage, tracked in readers.items()
                 if any(key == p or key.startswith(p + ".") or p.startswith(key + ".") for p in tracked))


def _yaml(value: Any) -> str:
    if value is dataclasses.MISSING:
        return "required"
    return yaml.safe_dump(value, default_flow_style=True, width=10_000).strip().removesuffix("\n...").strip()


def params_markdown(keys: list[Key]) -> str:
    """The reference page: a table per section, in params.yaml's order."""
    out = ["# params.yaml reference", "",
           "Every key the pipeline accepts, generated from the typed configs that parse params.yaml (type, default "
           "and the comment beside each field) and from dvc.yaml (the stages that track the key: change it and "
           "`dvc repro` reruns exactly those). The `check` stage validates the whole file before any stage runs. "
           "`<name>` stands for a backbone's name: its stages are `<stage>@<name>`.", ""]
    for table in TABLES:
        rows = [k for k in keys if k.table == table.prefix]
        if not rows:
            continue
        doc = (table.config.__doc__ or "").strip().splitlines()[0] if _own_doc(table.config) else ""
        out += [f"## {_heading(table)}", ""] + ([markdown_text(doc), ""] if doc else [])
        out += ["| key | type | default | read by | what it does |", "|---|---|---|---|---|"]
        out += [f"| `{k.key}` | `{code_text(k.type)}` | `{code_text(k.default)}` | "
                f"{', '.join(f'`{stage}`' for stage in k.read_by) or '—'} | {markdown_text(k.doc)} |" for k in rows]
        out.append("")
    return "\n".join(out)


def _heading(table: Table) -> str:
    """`prefix` as code, then what the table is about: the title's words after the key."""
    if not table.prefix:
        return markdown_text(table.title)
    rest = table.title.removeprefix(table.prefix).lstrip(":, ")
    return f"`{table.prefix}` — {markdown_text(rest)}" if rest else f"`{table.prefix}`"


def _own_doc(cls) -> bool:
    """Whether `cls` has a docstring of its own (dataclasses make one up from the signature)."""
    doc = cls.__doc__ or ""
    return bool(doc) and not doc.startswith(f"{cls.__name__}(")

