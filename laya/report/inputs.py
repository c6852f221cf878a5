"""Where the report finds each stage's detail files: one folder, one file name per stage and backbone."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from laya.io import read_json


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
    entries: dict[str, dict] = field(default_factory=dict)  # params backbones.<name> (arch, protocol)

    def arch(self, name: str) -> str:
        return str((self.entries.get(name) or {}).get("arch", name))

    def protocol(self, name: str) -> str:
        return str((self.entries.get(name) or {}).get("protocol", "frozen"))

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
        return read_json(path, f"depth@{name} metrics") if path.is_file() else None

    def clt(self) -> dict | None:
        path = self.details / "clt.json"
        return read_json(path, "clt metrics") if path.is_file() else None

    def clt_compared(self) -> dict[str, dict]:
        """{backbone: clt_compare@<backbone>'s metrics} in params order (the ViTs of params clt.compare)."""
        found = {}
        for name in self.backbones:
            path = self.details / f"clt_compare_{name}.json"
            if path.is_file():
                found[name] = read_json(path, f"clt_compare@{name} metrics")
        return found

    def frontier(self) -> dict | None:
        path = self.details / "clt_frontier.json"
        return read_json(path, "clt_frontier metrics") if path.is_file() else None
