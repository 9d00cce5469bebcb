"""The one document model of every report: content blocks, number formatting and two renderers.

A report is a list of :class:`Block` (headings, paragraphs, labelled items, code, tables,
figures and folded groups of blocks). :func:`render_markdown` and :func:`render_html` turn the
same list into ``report.md`` and ``report.html``, so both documents say the same thing;
:func:`write_documents` writes both.

``report.html`` stands alone: inline CSS, no scripts, and every figure embedded as a base64 PNG
data URI (its ``data-file`` attribute names the PNG file it was read from), so the page can be
mailed or moved by itself. ``report.md`` links the PNG files next to it. A folded group
(:func:`md_details`) is a ``<details>`` element in HTML, closed until the reader opens it (long
tables: the answer stays on the first screen); in Markdown its blocks are written out in full,
without the fold, so ``report.md`` reads (and greps) as the whole text. ``**bold**`` in a
paragraph or an item is bold in both.
"""

from __future__ import annotations

import base64
import html
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

MARKDOWN_FILE = "report.md"
HTML_FILE = "report.html"


@dataclass(frozen=True)
class FigureOutcome:
    """One figure of a report: written (``path``) or skipped (``skipped`` says why)."""

    file: str
    title: str
    caption: str
    path: Path | None = None
    skipped: str | None = None


@dataclass(frozen=True)
class Block:
    """One piece of the report: ``kind`` is heading, text, items, code, table, figure or
    details (``text`` its summary, ``blocks`` what it folds)."""

    kind: str
    text: str = ""
    level: int = 2
    items: tuple[tuple[str, str], ...] = ()
    header: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    figure: FigureOutcome | None = None
    blocks: tuple[Block, ...] = ()


def md_heading(text: str, level: int = 2) -> Block:
    return Block("heading", text=text, level=level)


def md_text(text: str) -> Block:
    return Block("text", text=text)


def md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> Block:
    return Block("table", header=tuple(header), rows=tuple(tuple(r) for r in rows))


def md_items(items: Sequence[tuple[str, str]]) -> Block:
    return Block("items", items=tuple(items))


def md_code(text: str) -> Block:
    return Block("code", text=text)


def md_figure(figure: FigureOutcome) -> Block:
    return Block("figure", figure=figure)


def md_details(summary: str, blocks: Sequence[Block]) -> Block:
    """Return ``blocks`` folded under a one-line ``summary`` (HTML ``<details>``; in Markdown
    the blocks in full, without the summary)."""
    return Block("details", text=summary, blocks=tuple(blocks))


# Number formatting


def format_number(value: float, *, signed: bool = False) -> str:
    """Return ``value`` to 3 significant digits (``"n/a"`` for NaN, thousands separated)."""
    if not math.isfinite(value):
        return "n/a"
    if value == 0:
        return "0"
    sign = "+" if signed and value > 0 else ""
    magnitude = abs(value)
    if magnitude >= 1000:
        digits = math.floor(math.log10(magnitude)) + 1
        rounded = round(value, 3 - digits)
        return f"{sign}{rounded:,.0f}"
    text = f"{value:#.3g}"
    if "e" not in text:
        text = text.rstrip(".")
    return sign + text


def format_interval(mean: float, low: float, high: float, *, signed: bool = False) -> str:
    """Return ``"mean [low, high]"`` to 3 significant digits (``"mean [n/a]"`` without one)."""
    if not math.isfinite(mean):
        return "n/a"
    centre = format_number(mean, signed=signed)
    if not (math.isfinite(low) and math.isfinite(high)):
        return f"{centre} [n/a]"
    return f"{centre} [{format_number(low, signed=signed)}, {format_number(high, signed=signed)}]"


def format_p_value(p: float) -> str:
    """Return a p-value to 2 significant digits (``"< 0.001"`` below that, ``"n/a"`` for NaN)."""
    if not math.isfinite(p):
        return "n/a"
    if p < 0.001:
        return "< 0.001"
    return f"{p:.2g}"


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(blocks: Sequence[Block]) -> str:
    """Return the Markdown text of the report's blocks."""
    return "\n".join(_markdown_lines(blocks)).rstrip("\n") + "\n"


def _markdown_lines(blocks: Sequence[Block]) -> list[str]:
    lines: list[str] = []
    for block in blocks:
        if block.kind == "details":
            lines += _markdown_lines(block.blocks)
        elif block.kind == "heading":
            lines += ["#" * block.level + " " + block.text, ""]
        elif block.kind == "text":
            lines += [block.text, ""]
        elif block.kind == "items":
            lines += [f"- **{label}**: {value}" for label, value in block.items]
            lines.append("")
        elif block.kind == "code":
            lines += ["```", block.text, "```", ""]
        elif block.kind == "table":
            lines.append("| " + " | ".join(_md_cell(h) for h in block.header) + " |")
            lines.append("|" + " --- |" * len(block.header))
            lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in block.rows]
            lines.append("")
        elif block.kind == "figure" and block.figure is not None:
            figure = block.figure
            if figure.path is not None:
                lines += [f"![{figure.title}]({figure.file})", "", f"*{figure.caption}*", ""]
            else:
                lines += [f"**{figure.title}**: not drawn: {figure.skipped}.", ""]
    return lines


_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 62rem;
       margin: 1rem auto; padding: 0 1rem; color: #222; line-height: 1.45; }
h1 { border-bottom: 2px solid #ccc; padding-bottom: 0.2rem; margin: 0 0 0.5rem; }
p, ul { margin: 0.5rem 0; }
h2 { margin-top: 2rem; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 1rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.3rem 0.6rem; text-align: left; }
th { background: #f2f2f2; }
tr:nth-child(even) td { background: #fafafa; }
pre { background: #f4f4f4; padding: 0.6rem; overflow-x: auto; }
figure { margin: 1rem 0; }
figure img { display: block; max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-style: italic; color: #555; }
details { margin: 0.5rem 0; }
summary { cursor: pointer; color: #235; font-weight: 600; }
details[open] > summary { margin-bottom: 0.3rem; }
.skipped { color: #a33; }
""".strip()


_BOLD = re.compile(r"\*\*(.+?)\*\*")


def _inline(text: str) -> str:
    """Return ``text`` escaped for HTML, with ``**bold**`` as ``<strong>``."""
    return _BOLD.sub(r"<strong>\1</strong>", html.escape(text))


FIGURE_SCALE = 0.6
"""CSS pixels per pixel of a figure's PNG in ``report.html``: every figure is shown at the same
scale (a 150-dpi figure at 90 CSS pixels an inch), so their lettering is the same size (narrower
where the page is narrower)."""

_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _figure_image(figure: FigureOutcome) -> tuple[str, str]:
    """Return the ``src`` of a drawn figure in ``report.html``, its PNG as a base64 data URI,
    and its ``width``/``height`` attributes (the file's name and no size when the file is gone
    or no PNG, which no report writer leaves)."""
    if figure.path is None or not Path(figure.path).is_file():
        return figure.file, ""
    data = Path(figure.path).read_bytes()
    if not data.startswith(_PNG_MAGIC) or len(data) < 24:
        return figure.file, ""
    width, height = (round(int.from_bytes(data[k : k + 4], "big") * FIGURE_SCALE) for k in (16, 20))
    source = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
    return source, f' width="{width}" height="{height}"'


def render_html(blocks: Sequence[Block], title: str) -> str:
    """Return a standalone HTML page of the report's blocks (inline CSS, no scripts, figures
    embedded as data URIs)."""
    esc = html.escape
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f"<title>{esc(title)}</title>",
        f"<style>\n{_CSS}\n</style>",
        "</head>",
        "<body>",
        *_html_parts(blocks),
        "</body>",
        "</html>",
        "",
    ]
    return "\n".join(parts)


def _html_parts(blocks: Sequence[Block]) -> list[str]:
    esc = html.escape
    parts: list[str] = []
    for block in blocks:
        if block.kind == "details":
            parts.append(f"<details>\n<summary>{_inline(block.text)}</summary>")
            parts += _html_parts(block.blocks)
            parts.append("</details>")
        elif block.kind == "heading":
            parts.append(f"<h{block.level}>{esc(block.text)}</h{block.level}>")
        elif block.kind == "text":
            parts.append(f"<p>{_inline(block.text)}</p>")
        elif block.kind == "items":
            parts.append("<ul>")
            parts += [
                f"<li><strong>{esc(label)}</strong>: {_inline(value)}</li>"
                for label, value in block.items
            ]
            parts.append("</ul>")
        elif block.kind == "code":
            parts.append(f"<pre><code>{esc(block.text)}</code></pre>")
        elif block.kind == "table":
            parts += ["<table>", "<thead>", "<tr>"]
            parts += [f'<th scope="col">{esc(h)}</th>' for h in block.header]
            parts += ["</tr>", "</thead>", "<tbody>"]
            for row in block.rows:
                cells = "".join(f"<td>{esc(c)}</td>" for c in row)
                parts.append(f"<tr>{cells}</tr>")
            parts += ["</tbody>", "</table>"]
        elif block.kind == "figure" and block.figure is not None:
            figure = block.figure
            if figure.path is not None:
                source, size = _figure_image(figure)
                parts += [
                    "<figure>",
                    f'<img src="{esc(source)}"{size} data-file="{esc(figure.file)}" '
                    f'alt="{esc(figure.title)}">',
                    f"<figcaption>{esc(figure.caption)}</figcaption>",
                    "</figure>",
                ]
            else:
                parts.append(
                    f'<p class="skipped"><strong>{esc(figure.title)}</strong>: not drawn: '
                    f"{esc(str(figure.skipped))}.</p>"
                )
    return parts


def write_documents(blocks: Sequence[Block], out_dir: Path, title: str) -> tuple[Path, Path]:
    """Write ``report.md`` and ``report.html`` of the blocks into ``out_dir``; return both."""
    markdown = Path(out_dir) / MARKDOWN_FILE
    markdown.write_text(render_markdown(blocks), encoding="utf-8")
    page = Path(out_dir) / HTML_FILE
    page.write_text(render_html(blocks, title), encoding="utf-8")
    return markdown, page
