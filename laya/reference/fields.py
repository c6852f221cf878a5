"""A typed config's fields as the reference shows them: name, type, default and the comment written beside it.

The comment after a field (and the comment lines that continue it) is the field's documentation, read from the
class's source with `ast` and `tokenize`, so what a key does is written once, next to its type and default.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import io
import textwrap
import tokenize
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Field:
    name: str
    type: str  # as annotated, e.g. `list[int] | None`
    default: Any  # dataclasses.MISSING when the field has none
    doc: str


def fields_of(cls) -> list[Field]:
    """Every dataclass field of `cls` (inherited ones first, as dataclasses orders them) with its comment."""
    docs, annotations = documented(cls)
    return [Field(f.name, annotations.get(f.name, str(f.type)), _default(f), docs.get(f.name, ""))
            for f in dataclasses.fields(cls)]


def _default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


def documented(cls) -> tuple[dict[str, str], dict[str, str]]:
    """{field: its comment}, {field: its annotation as written} over `cls` and the laya classes it inherits from
    (bases first, so a subclass's own comment wins): a dataclass config or a pydantic record alike."""
    docs: dict[str, str] = {}
    annotations: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if "__annotations__" in vars(klass) and klass.__module__.startswith("laya."):
            found_docs, found_types = commented_fields(klass)
            docs.update(found_docs)
            annotations.update(found_types)
    return docs, annotations


def commented_fields(cls) -> tuple[dict[str, str], dict[str, str]]:
    """{field: its comment}, {field: its annotation as written} for the fields `cls` itself declares."""
    source = textwrap.dedent(inspect.getsource(cls))
    lines = source.splitlines()
    comments: dict[int, str] = {}  # 1-based line → comment text (without '#')
    code_lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token.string.lstrip("#").strip()
        elif token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER):
            code_lines.add(token.start[0])
    body = ast.parse(source).body[0].body
    docs, types_ = {}, {}
    for node in body:
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        name = node.target.id
        types_[name] = ast.get_source_segment(source, node.annotation) or ""
        parts = [comments[line] for line in range(node.lineno, node.end_lineno + 1) if line in comments]
        line = node.end_lineno + 1
        while line <= len(lines) and line in comments and line not in code_lines:  # the comment goes on below
            parts.append(comments[line])
            line += 1
        docs[name] = " ".join(parts)
    return docs, types_


def type_text(hint: str) -> str:
    """An annotation for readers: `X | None` written as `X or null` (YAML's word), quotes dropped."""
    text = hint.replace("'", "").replace('"', "")
    return text.replace(" | None", " or null")


def code_text(text: str) -> str:
    """Text inside a code span of a table cell: only `|` needs escaping."""
    return text.replace("|", "\\|")


def markdown_text(text: str) -> str:
    """`text` for a Markdown page or table cell: `<` and `>` outside code spans escaped (`<name>` would be read as
    an HTML tag), `|` escaped (a table cell's edge)."""
    parts = text.split("`")
    for i in range(0, len(parts), 2):  # even parts are outside code spans
        parts[i] = parts[i].replace("<", "&lt;").replace(">", "&gt;")
    return "`".join(parts).replace("|", "\\|")
