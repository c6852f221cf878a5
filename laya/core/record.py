"""A stage's detail output as a typed record: the contract between the stage that writes reports/details/*.json
and the report that reads it.

Each stage package defines its record (a pydantic model: `TrainRecord` in laya.records.train, …). The stage builds
it and calls `write`; the report calls `read`, which checks every field's name and type, so a file of another
shape fails with one line naming the file, the field and the fix instead of a KeyError deep in the report.
`VERSION` changes with the record's shape; it names the schema (`schema()["$id"]`) and the error message.
A stage that its backbone's entry turns off writes `NotRun` instead (`read_optional` returns None for it).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Self

from pydantic import BaseModel, ConfigDict, ValidationError

from laya.core.config import ConfigError
from laya.core.io import read_json, write_json


class Part(BaseModel):
    """A nested part of a record: every field declared, nothing else accepted."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Record(Part):
    """A stage's detail record. STAGE: the stage that writes it, as `dvc repro` names it (`train@<backbone>`)."""

    STAGE: ClassVar[str] = ""
    VERSION: ClassVar[int] = 1

    def write(self, path: str | Path) -> None:
        """Sorted keys, indented (laya.core.io.write_json); fields never set (an optional part) are left out."""
        write_json(path, self.model_dump(exclude_unset=True))

    @classmethod
    def parse(cls, data: object, source: str | Path) -> Self:
        try:
            return cls.model_validate(data)
        except ValidationError as err:
            first = err.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(top level)"
            stage = cls.stage_of(source)
            raise ConfigError(f"{source}: not the record {stage} writes (v{cls.VERSION}; {where}: {first['msg']}); "
                              f"rerun `dvc repro --force {stage}` with this laya.") from None

    @classmethod
    def prefix(cls) -> str:
        """The stage's name without its backbone, which starts its detail file's name: "evaluate"."""
        return cls.STAGE.partition("@")[0]

    @classmethod
    def file_name(cls, name: str | None = None) -> str:
        """evaluate_<name>.json for a per-backbone stage, clt.json for a single one."""
        return f"{cls.prefix()}_{name}.json" if "<name>" in cls.STAGE else f"{cls.prefix()}.json"

    @classmethod
    def stage_of(cls, path: str | Path) -> str:
        """The stage that writes `path`: reports/details/evaluate_mlp.json → evaluate@mlp."""
        return cls.STAGE.replace("<name>", Path(path).stem.removeprefix(f"{cls.prefix()}_"))

    @classmethod
    def read(cls, path: str | Path) -> Self:
        return cls.parse(read_json(path, f"{cls.stage_of(path)} record"), path)

    @classmethod
    def read_optional(cls, path: str | Path) -> Self | None:
        """The record, or None when the file is missing or says the stage did not run (NotRun)."""
        path = Path(path)
        if not path.is_file():
            return None
        data = read_json(path, f"{cls.stage_of(path)} record")
        if isinstance(data, dict) and set(data) == set(NotRun.model_fields):
            return None
        return cls.parse(data, path)

    @classmethod
    def schema(cls) -> dict:
        """The record's JSON Schema (for the documentation of the detail files)."""
        return {"$id": f"laya:{cls.STAGE.split('@')[0]}/v{cls.VERSION}", **cls.model_json_schema()}


class NotRun(Record):
    """What a per-backbone stage writes when its backbone's entry turns it off (DVC needs its outputs)."""

    STAGE: ClassVar[str] = "any stage"
    not_run: str  # e.g. "backbones.cnn.depth is false"
