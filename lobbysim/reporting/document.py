"""The one document model of every report: content blocks, number formatting and two renderers.

A report is a list of :class:`Block` (headings, paragraphs, labelled items, code, tables and
figures). :func:`render_markdown` and :func:`render_html` turn the same list into ``report.md``
and a standalone ``report.html`` (inline CSS, no scripts, no external resources; figures linked
relatively), so both documents say the same thing; :func:`write_documents` writes both.
"""

from __future__ import annotations

import html
import math
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
    """One piece of the report: ``kind`` is heading, text, items, code, table or figure."""

    kind: str
    text: str = ""
    level: int = 2
    items: tuple[tuple[str, str], ...] = ()
    header: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    figure: FigureOutcome | None = None


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
    lines: list[str] = []
    for block in blocks:
        if block.kind == "heading":
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
    return "\n".join(lines).rstrip("\n") + "\n"


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
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-style: italic; color: #555; }
.skipped { color: #a33; }
""".strip()


def render_html(blocks: Sequence[Block], title: str) -> str:
    """Return a standalone HTML page of the report's blocks (inline CSS, no scripts)."""
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
    ]
    for block in blocks:
        if block.kind == "heading":
            parts.append(f"<h{block.level}>{esc(block.text)}</h{block.level}>")
        elif block.kind == "text":
            parts.append(f"<p>{esc(block.text)}</p>")
        elif block.kind == "items":
            parts.append("<ul>")
            parts += [
                f"<li><strong>{esc(label)}</strong>: {esc(value)}</li>"
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
                parts += [
                    "<figure>",
                    f'<img src="{esc(figure.file)}" alt="{esc(figure.title)}">',
                    f"<figcaption>{esc(figure.caption)}</figcaption>",
                    "</figure>",
                ]
            else:
                parts.append(
                    f'<p class="skipped"><strong>{esc(figure.title)}</strong>: not drawn: '
                    f"{esc(str(figure.skipped))}.</p>"
                )
    parts += ["</body>", "</html>", ""]
    return "\n".join(parts)


def write_documents(blocks: Sequence[Block], out_dir: Path, title: str) -> tuple[Path, Path]:
    """Write ``report.md`` and ``report.html`` of the blocks into ``out_dir``; return both."""
    markdown = Path(out_dir) / MARKDOWN_FILE
    markdown.write_text(render_markdown(blocks), encoding="utf-8")
    page = Path(out_dir) / HTML_FILE
    page.write_text(render_html(blocks, title), encoding="utf-8")
    return markdown, page
