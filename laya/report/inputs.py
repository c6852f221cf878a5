"""Where the report finds each stage's detail files: one folder, one file name per stage and backbone."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from laya.backbones.config import BackboneConfig
from laya.core.io import not_run, read_json


@dataclass(frozen=True)
class ReportInputs:
    """The `report` stage's view of the pipeline: backbones in params order, the detail folder the stages write
    (backbone_<name>.json, train_<name>.json, evaluate_<name>.json, depth_<name>.json, clt.json,
    clt_compare_<name>.json, clt_frontier.json), the
    training curves (<curves>/<name>/<head>.csv) and the figures."""

    dataset: str  # shown in headings, e.g. "Fashion-MNIST"
    backbones: list[str]
    details: Path
    curves: Path | None = None
    figures: Path | None = None
    heads: list[str] = field(default_factory=list)  # params heads.names: row order
    pairs: list[tuple[str, str]] = field(default_factory=list)  # params evaluate.methods as (method, head)
    entries: dict[str, BackboneConfig] = field(default_factory=dict)  # params backbones.<name>.backbone

    def arch(self, name: str) -> str:
        return self.entries[name].arch if name in self.entries else name

    def protocol(self, name: str) -> str:
        return self.entries.get(name, BackboneConfig()).protocol

    def backbone(self, name: str) -> dict:
        return read_json(self.details / f"backbone_{name}.json", f"backbone@{name} metrics")

    def train(self, name: str) -> dict:
        return read_json(self.details / f"train_{name}.json", f"train@{name} metrics")

    def evaluate(self, name: str) -> dict | None:
        path = self.details / f"evaluate_{name}.json"
        return read_json(path, f"evaluate@{name} metrics") if path.is_file() else None

    def sanity(self, name: str) -> dict | None:
        path = self.details / f"sanity_{name}.json"
        return read_json(path, f"sanity@{name} metrics") if path.is_file() else None

    def depth(self, name: str) -> dict | None:
        path = self.details / f"depth_{name}.json"
        record = read_json(path, f"depth@{name} metrics") if path.is_file() else None
        return None if not_run(record) else record

    def clt(self) -> dict | None:
        path = self.details / "clt.json"
        return read_json(path, "clt metrics") if path.is_file() else None

    def clt_compared(self) -> dict[str, dict]:
        """{backbone: clt_compare@<backbone>'s metrics} in params order (the entries with clt_compare: true)."""
        found = {}
        for name in self.backbones:
            path = self.details / f"clt_compare_{name}.json"
            record = read_json(path, f"clt_compare@{name} metrics") if path.is_file() else None
            if record is not None and not not_run(record):
                found[name] = record
        return found

    def frontier(self) -> dict | None:
        path = self.details / "clt_frontier.json"
        return read_json(path, "clt_frontier metrics") if path.is_file() else None
