"""Where the report finds each stage's detail files: one folder, one file name per stage and backbone."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from laya.backbones.config import BackboneConfig, entry
from laya.data.config import dataset_title
from laya.records.backbone import BackboneRecord
from laya.records.clt import CLTCompareRecord, CLTRecord, FrontierRecord
from laya.records.depth import DepthRecord
from laya.records.evaluate import EvaluateRecord
from laya.records.sanity import SanityRecord
from laya.records.train import TrainRecord

# reports/details/<prefix>_<backbone>.json (<prefix>.json for the clt stages) → the record it holds
RECORDS = {r.prefix(): r for r in (BackboneRecord, TrainRecord, EvaluateRecord, SanityRecord, DepthRecord, CLTRecord,
                                   CLTCompareRecord, FrontierRecord)}


@dataclass(frozen=True)
class ReportInputs:
    """The `report` stage's view of the pipeline: backbones in params order, the detail folder the stages write
    (one typed record per stage and backbone, read through its type: backbone_<name>.json is a BackboneRecord, …),
    the training curves (<curves>/<name>/<head>.csv) and the figures."""

    dataset: str  # shown in headings, e.g. "Fashion-MNIST"
    backbones: list[str]
    details: Path
    curves: Path | None = None
    figures: Path | None = None
    heads: list[str] = field(default_factory=list)  # params heads.names: row order
    pairs: list[tuple[str, str]] = field(default_factory=list)  # params evaluate.methods as (method, head)
    entries: dict[str, BackboneConfig] = field(default_factory=dict)  # params backbones.<name>.backbone

    classes: int | None = None  # the dataset's class count (chance is 1/classes); None = not known

    @classmethod
    def from_params(cls, params: dict, details: Path, curves: Path | None = None, figures: Path | None = None,
                    classes: int | None = None) -> ReportInputs:
        """What the report reads of params.yaml: `data.name` (headings), `backbones` (which, in which order, and
        their architecture and protocol), `heads.names` and `evaluate.methods` (row order)."""
        backbones = params.get("backbones") or {}
        methods = (params.get("evaluate") or {}).get("methods") or {}
        return cls(dataset_title((params.get("data") or {}).get("name", "fashion_mnist")), list(backbones),
                   Path(details), curves and Path(curves), figures and Path(figures),
                   list((params.get("heads") or {}).get("names") or []),
                   [(method, head) for method, heads in methods.items() for head in heads],
                   {name: entry(params, name).backbone for name in backbones}, classes)

    def arch(self, name: str) -> str:
        """mlp | cnn | vit, or timm:<model name>: two timm backbones are told apart."""
        if name not in self.entries:
            return name
        entry = self.entries[name]
        return f"timm:{entry.model.get('name')}" if entry.arch == "timm" else entry.arch

    def protocol(self, name: str) -> str:
        return self.entries.get(name, BackboneConfig()).protocol

    def backbone(self, name: str) -> BackboneRecord:
        return BackboneRecord.read(self.details / BackboneRecord.file_name(name))

    def train(self, name: str) -> TrainRecord:
        return TrainRecord.read(self.details / TrainRecord.file_name(name))

    def evaluate(self, name: str) -> EvaluateRecord | None:
        return EvaluateRecord.read_optional(self.details / EvaluateRecord.file_name(name))

    def sanity(self, name: str) -> SanityRecord | None:
        return SanityRecord.read_optional(self.details / SanityRecord.file_name(name))

    def depth(self, name: str) -> DepthRecord | None:
        """None when the stage has not run, or its entry turns it off (depth: false)."""
        return DepthRecord.read_optional(self.details / DepthRecord.file_name(name))

    def clt(self) -> CLTRecord | None:
        return CLTRecord.read_optional(self.details / CLTRecord.file_name())

    def clt_compared(self) -> dict[str, CLTCompareRecord]:
        """{backbone: clt_compare@<backbone>'s record} in params order (the entries with clt_compare: true)."""
        found = {name: CLTCompareRecord.read_optional(self.details / CLTCompareRecord.file_name(name))
                 for name in self.backbones}
        return {name: record for name, record in found.items() if record is not None}

    def frontier(self) -> FrontierRecord | None:
        return FrontierRecord.read_optional(self.details / FrontierRecord.file_name())
