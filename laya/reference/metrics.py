"""The metrics reference, generated: the headline keys (`dvc metrics show`) from laya.report.headline, and each
stage's detail record (reports/details/) from its pydantic type — fields, types and the comment beside each."""

from __future__ import annotations

from laya.reference.fields import code_text, documented, markdown_text, type_text
from laya.report.headline import CLT_KEYS, KEYS
from laya.report.inputs import RECORDS


def metrics_markdown() -> str:
    out = ["# Metrics reference", "",
           "## Headline metrics (`dvc metrics show`)", "",
           "The `report` stage writes the same keys to `reports/metrics/<backbone>.json` for every backbone (a key "
           "whose stage did not run, or whose head or method is not there, is left out and shows as `-`), and the "
           "transcoder's to `reports/metrics/clt.json`. So `dvc metrics show` prints one row per backbone, and "
           "`dvc exp show` and `dvc metrics diff` one column per question. Every other number is in the detail "
           "files below.", "",
           "| key | file | what it is |", "|---|---|---|"]
    out += [f"| `{key}` | `<backbone>.json` | {markdown_text(doc)} |" for key, doc in KEYS.items()]
    out += [f"| `{key}` | `clt.json` | {markdown_text(doc)} |" for key, doc in CLT_KEYS.items()]
    out += ["", "## Detail files (reports/details/)", "",
            "Each stage writes one typed record per backbone (`<prefix>_<backbone>.json`; the transcoder stages "
            "`<prefix>.json`). They are plain DVC outputs, in git, read by the report through their type "
            "(`laya.records`): a file of another shape fails with one line naming the field and the stage to "
            "rerun. Their JSON Schema: `Record.schema()`.", ""]
    for prefix, record in RECORDS.items():
        out += [f"### `{prefix}` — stage `{record.STAGE}`", ""]
        doc = (record.__doc__ or "").strip()
        if doc:
            out += [markdown_text(" ".join(doc.split())), ""]
        out += ["| field | type | what it is |", "|---|---|---|"]
        docs, types = documented(record)
        out += [f"| `{name}` | `{code_text(type_text(types.get(name, '')))}` | {markdown_text(docs.get(name, ''))} |"
                for name in record.model_fields]
        out.append("")
    return "\n".join(out)

