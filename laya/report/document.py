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
.scroll{overflow-x:auto;max-width:100%}nav.toc{background:#f7f7f7;padding:.5em 1em;border:1px solid #ddd}
nav.toc ol{margin:.3em 0}img{max-width:100%}
table{border-collapse:collapse;margin:1em 0;font-size:13px}th,td{border:1px solid #ccc;padding:3px 7px}
th{background:#f2f2f2}td{text-align:right}td:first-child,td:nth-child(2){text-align:left}
figure{display:inline-block;margin:.5em 1em .5em 0;vertical-align:top;max-width:560px}
figcaption{font-size:12px;color:#555}code{background:#f4f4f4;padding:0 3px}"""


def to_html(blocks: list[Block], title: str) -> str:
    """One HTML page: the same blocks, figures embedded as base64 PNG, a table of contents of the level-2
    headings after the first heading, and every table in a box that scrolls sideways by itself (never the page)."""
    body, toc = [], []
    for block in blocks:
        if isinstance(block, Heading):
            anchor = _anchor(block.text, len(toc))
            if block.level == 2:
                toc.append(f'<li><a href="#{anchor}">{_inline(block.text)}</a></li>')
            body.append(f'<h{block.level} id="{anchor}">{_inline(block.text)}</h{block.level}>')
        elif isinstance(block, Table):
            head = "".join(f"<th>{_inline(c)}</th>" for c in block.header)
            rows = "".join("<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in row) + "</tr>" for row in block.rows)
            body.append(f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>')
        elif isinstance(block, Figure):
            data = base64.b64encode(Path(block.path).read_bytes()).decode()
            body.append(f'<figure><img alt="{html.escape(block.caption)}" src="data:image/png;base64,{data}">'
                        f"<figcaption>{_inline(block.caption)}</figcaption></figure>")
        else:
            body.append(f"<p>{_inline(block)}</p>")
    if toc and body:
        body.insert(1, '<nav class="toc"><strong>Contents</strong><ol>' + "".join(toc) + "</ol></nav>")
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{html.escape(title)}</title>\n"
            f"<style>{CSS}</style>\n</head>\n<body>\n" + "\n".join(body) + "\n</body>\n</html>\n")


def _anchor(text: str, index: int) -> str:
    """A heading's id: its words, lower case, joined by '-' (the index keeps repeated headings apart)."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    return "-".join(words[:6]) + f"-{index}" if words else f"section-{index}"


def _inline(text: str) -> str:
    """Escape, then turn Markdown `code` spans into <code> and **bold** into <strong>."""
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text, quote=False))
    return re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", text)
