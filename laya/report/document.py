"""A report as a list of blocks (headings, paragraphs, tables, figures), rendered to Markdown or to one
self-contained HTML file (figures inline as data: URIs, no network needed)."""

from __future__ import annotations

import base64
import html
import os
import re
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Heading:
    level: int
    text: str


@dataclass(frozen=True)
class Table:
    header: list[str]
    rows: list[list[str]]


@dataclass(frozen=True)
class Figure:
    path: Path
    caption: str


Block = Heading | Table | Figure | str  # a str is a paragraph (Markdown inline code allowed)


def to_markdown(blocks: list[Block], base: Path) -> str:
    """Markdown; figure links relative to `base` (the folder the .md file lives in)."""
    out = []
    for block in blocks:
        if isinstance(block, Heading):
            out.append(f"{'#' * block.level} {block.text}")
        elif isinstance(block, Table):
            out.append("\n".join([_md_row(block.header), "|" + "---|" * len(block.header),
                                  *(_md_row(row) for row in block.rows)]))
        elif isinstance(block, Figure):
            out.append(f"![{block.caption}]({Path(os.path.relpath(block.path, base)).as_posix()})")
        else:
            out.append(block)
    return "\n\n".join(out) + "\n"


def _md_row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


CSS = """body{font:15px/1.45 system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:13px}th,td{border:1px solid #ccc;padding:3px 7px}
th{background:#f2f2f2}td{text-align:right}td:first-child,td:nth-child(2){text-align:left}
figure{display:inline-block;margin:.5em 1em .5em 0;vertical-align:top}img{max-width:560px}
figcaption{font-size:12px;color:#555}code{background:#f4f4f4;padding:0 3px}"""


def to_html(blocks: list[Block], title: str) -> str:
    """One HTML page: the same blocks, figures embedded as base64 PNG."""
    body = []
    for block in blocks:
        if isinstance(block, Heading):
            body.append(f"<h{block.level}>{_inline(block.text)}</h{block.level}>")
        elif isinstance(block, Table):
            head = "".join(f"<th>{_inline(c)}</th>" for c in block.header)
            rows = "".join("<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in row) + "</tr>" for row in block.rows)
            body.append(f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")
        elif isinstance(block, Figure):
            data = base64.b64encode(Path(block.path).read_bytes()).decode()
            body.append(f'<figure><img alt="{html.escape(block.caption)}" src="data:image/png;base64,{data}">'
                        f"<figcaption>{_inline(block.caption)}</figcaption></figure>")
        else:
            body.append(f"<p>{_inline(block)}</p>")
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{html.escape(title)}</title>\n'
            f"<style>{CSS}</style>\n</head>\n<body>\n" + "\n".join(body) + "\n</body>\n</html>\n")


def _inline(text: str) -> str:
    """Escape, then turn Markdown `code` spans into <code>."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text, quote=False))
