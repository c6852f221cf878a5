"""The protocol × backbone tables: the same architecture trained frozen, jointly with LAYA, or pretrained on other
classes, side by side (numbers copied from the stages' detail files), with the paper's numbers beside ours."""

from __future__ import annotations

from laya.report.document import Block, Table
from laya.report.inputs import ReportInputs
from laya.report.references import LAYA_PAPER_JOINT_MLP
from laya.report.tables import accuracy_cell, mean_std

PROTOCOL_TEXT = (
    "Protocols: `frozen` — the backbone trained with a linear classifier, frozen, every head trained on its cache; "
    "`joint` — backbone and LAYA trained end to end (the LAYA paper's; the co-trained head is `laya_joint`, the "
    "other heads train on the frozen cache of that same backbone, one backbone per seed); `transfer` — the "
    "backbone trained on other classes (`pretrain_classes`), frozen, every head trained and scored on the "
    "remaining classes only.")


def chance_text(inputs: ReportInputs) -> str:
    """What guessing scores, from the data's class count: 1/k, and 1/(k − pretrained) for each transfer entry."""
    if inputs.classes is None:
        return ""
    levels = {f"1/{inputs.classes}": "frozen and joint entries"}
    for name in inputs.backbones:
        classes = inputs.entries[name].pretrain_classes if name in inputs.entries else None
        if inputs.protocol(name) == "transfer" and classes:
            levels.setdefault(f"1/{inputs.classes - len(classes)}", f"`{name}`")
    return "Chance accuracy: " + "; ".join(f"{level} for {who}" for level, who in levels.items()) + "."


def _entries(inputs: ReportInputs) -> list[tuple[str, str, str]]:
    """(arch, protocol, entry) sorted by architecture, then protocol in PROTOCOLS order, then params order."""
    order = {"frozen": 0, "joint": 1, "transfer": 2}
    archs = list(dict.fromkeys(inputs.arch(name) for name in inputs.backbones))
    rows = [(inputs.arch(n), inputs.protocol(n), n) for n in inputs.backbones]
    return sorted(rows, key=lambda r: (archs.index(r[0]), order.get(r[1], 9), inputs.backbones.index(r[2])))


def protocol_accuracy_table(inputs: ReportInputs) -> list[Block]:
    """Rows (architecture, protocol); columns: the backbone's own accuracy (the joint model's for joint) and each
    head's test accuracy."""
    entries = _entries(inputs)
    trains = {n: inputs.train(n) for _, _, n in entries}
    heads = list(dict.fromkeys([*inputs.heads, *(h for t in trains.values() for h in t.accuracy)]))
    rows = []
    for arch, protocol, name in entries:
        card = inputs.backbone(name)
        own = f"{card.test_accuracy:.4f}" + (f" ± {card.test_accuracy_std:.4f}"
                                              if card.test_accuracy_std is not None else "")
        seeds = max(len(a.seeds) for a in trains[name].accuracy.values())
        rows.append([name, arch, protocol, str(seeds), own, *(accuracy_cell(trains[name], h) for h in heads)])
    return [Table(["backbone", "arch", "protocol", "seeds", "backbone (own classifier)", *heads], rows)]


def protocol_attribution_table(inputs: ReportInputs) -> list[Block]:
    """One row per (architecture, protocol, head, method): faithfulness and Deletion@1, mean ± std."""
    rows = []
    for arch, protocol, name in _entries(inputs):
        e = inputs.evaluate(name)
        if e is None:
            continue
        found = e.pairs()
        for method, head in dict.fromkeys([p for p in inputs.pairs if p in found] + found):
            rows.append([name, arch, protocol, head, method,
                         *(mean_std(e.score(g, head, method), 3, e.seeds) for g in ("faithfulness", "deletion_at_1"))])
    if not rows:
        return ["(no evaluate metrics yet: run `dvc repro`)"]
    return [Table(["backbone", "arch", "protocol", "head", "method", "faithfulness", "Deletion@1"], rows)]


def comparison_lines(inputs: ReportInputs) -> list[Block]:
    """Each joint mlp's co-trained head beside the paper's numbers; each transfer entry's LAYA beside LastLayer."""
    lines = []
    for arch, protocol, name in _entries(inputs):
        record = inputs.train(name)
        acc = record.accuracy
        if protocol == "joint" and arch == "mlp" and "laya_joint" in acc:
            e = inputs.evaluate(name)
            shown = mean_std(e and e.score("faithfulness", "laya_joint", "intrinsic"), 3)
            paper = LAYA_PAPER_JOINT_MLP
            lines.append(f"`{name}`: laya_joint accuracy {mean_std(acc['laya_joint'])} (paper {paper['accuracy']}), "
                         f"faithfulness of α {shown} (paper {paper['faithfulness']}).")
        if protocol == "transfer" and {"laya", "last"} <= set(acc):
            gain = 100 * (acc["laya"].mean - acc["last"].mean)
            lines.append(f"`{name}`: LAYA {accuracy_cell(record, 'laya')} vs LastLayer "
                         f"{accuracy_cell(record, 'last')}: {gain:+.2f} pp.")
    return [" ".join(lines)] if lines else []


def protocol_blocks(inputs: ReportInputs) -> list[Block]:
    return [" ".join(filter(None, [PROTOCOL_TEXT, chance_text(inputs)])), *protocol_accuracy_table(inputs),
            *comparison_lines(inputs),
            "Faithfulness and Deletion@1 of every method, by protocol:", *protocol_attribution_table(inputs)]
