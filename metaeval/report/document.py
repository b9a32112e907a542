"""A report as a list of blocks, written as Markdown (with PNG files) or one self-contained HTML.

The two outputs come from the same blocks, so they always say the same thing. The HTML file
embeds its images (``data:`` URIs) and its style: it has no external reference and can be
mailed or archived as one file.
"""

from __future__ import annotations

import base64
import html
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd


@dataclass
class Block:
    """One piece of a report: ``kind`` is heading, text, banner, table, figure or code."""

    kind: str
    text: str = ""
    level: int = 2
    frame: pd.DataFrame | None = None
    figure: object | None = None
    name: str = ""
    png: bytes = field(default=b"", repr=False)
    decimals: int | None = None
    collapsed: bool = False


def heading(text: str, level: int = 2) -> Block:
    return Block("heading", text, level=level)


def text(body: str) -> Block:
    return Block("text", body)


def banner(body: str) -> Block:
    return Block("banner", body)


def table(
    frame: pd.DataFrame,
    name: str,
    caption: str = "",
    *,
    decimals: int | None = None,
    collapsed: bool = False,
) -> Block:
    """A table, saved as ``tables/<name>.csv`` too (spaces and other characters a link would
    break on made ``_``). ``decimals``: the number format of its floats (default:
    :func:`decimals_for`); ``collapsed``: shown folded (a long table whose gist is elsewhere)."""
    return Block(
        "table",
        caption,
        frame=frame,
        name=_file_name(name),
        decimals=decimals,
        collapsed=collapsed,
    )


def _file_name(name: str) -> str:
    """``name`` as a file name a Markdown link can hold: letters, digits, ``_``, ``.``, ``-``."""
    return re.sub(r"[^\w.-]+", "_", name)


#: Resolution of the PNG figures: sharp on screen, small enough to commit.
DPI = 96


def figure(fig, name: str, caption: str = "") -> Block:
    """A matplotlib figure, rendered once to PNG (written beside ``index.md``, embedded in the
    HTML)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    return Block(
        "figure", caption, figure=fig, name=_file_name(name), png=_small_png(buf.getvalue())
    )


def _small_png(png: bytes) -> bytes:
    """The PNG with its colours reduced to a 256-colour palette: charts have few colours, and
    a report is committed and mailed, so it should be light (about a third of the size)."""
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    small = image.quantize(256, method=Image.Quantize.FASTOCTREE)
    # the background must stay pure white (the page's), not the palette's nearest grey
    palette = small.getpalette()
    palette = [
        255 if min(palette[i - i % 3 : i - i % 3 + 3]) >= 246 else v for i, v in enumerate(palette)
    ]
    small.putpalette(palette)
    out = io.BytesIO()
    small.save(out, format="PNG", optimize=True)
    return out.getvalue() if out.tell() < len(png) else png


def code(body: str, language: str = "") -> Block:
    return Block("code", body, name=language)


# ------------------------------------------------------------------------------ formatting
def _is_number(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(
        v, (bool, np.bool_)
    )


def decimals_for(frame: pd.DataFrame) -> int:
    """The one number of decimals a table's fractional numbers are printed with.

    Every float cell of a table is printed the same way, so that ``1`` never stands beside
    ``0.983``: no decimals when every float is a whole number, one decimal when the largest
    is 100 or more (counts averaged over trials), three otherwise. Integer columns print as
    integers.
    """
    values = [
        float(v)
        for col in frame.columns
        if not pd.api.types.is_integer_dtype(frame[col])
        for v in frame[col]
        if _is_number(v) and not np.isnan(v)
    ]
    if not values:
        return 3
    if all(v.is_integer() for v in values):
        return 0
    return 1 if max(abs(v) for v in values) >= 100 else 3


def format_value(v, decimals: int = 3) -> str:
    """One cell: integers as integers, floats with ``decimals`` decimals, NaN as empty."""
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        if np.isnan(v):
            return ""
        return f"{float(v):.{decimals}f}"
    return str(v)


def _formatter(frame: pd.DataFrame, decimals: int | None):
    decimals = decimals_for(frame) if decimals is None else decimals
    integer = {i for i, c in enumerate(frame.columns) if pd.api.types.is_integer_dtype(frame[c])}

    def fmt(i: int, v) -> str:
        if i in integer and _is_number(v):
            return str(int(v))
        return format_value(v, decimals)

    return fmt


def markdown_table(frame: pd.DataFrame, decimals: int | None = None) -> str:
    """A pipe table (one number format for the whole table, see :func:`decimals_for`); cells
    escaped so that a '|' in a measure name cannot break it."""
    cols = [str(c) for c in frame.columns]
    fmt = _formatter(frame, decimals)

    def cell(i, v):
        return fmt(i, v).replace("|", "\\|").replace("\n", " ")

    lines = [
        "| " + " | ".join(c.replace("|", "\\|") for c in cols) + " |",
        "|" + "|".join("---" for _ in cols) + "|",
    ]
    lines += [
        "| " + " | ".join(cell(i, v) for i, v in enumerate(row)) + " |"
        for row in frame.itertuples(index=False)
    ]
    return "\n".join(lines)


VERDICTS = ("holds", "does not hold", "inconclusive")


def _html_cell(v, text: str) -> str:
    text = html.escape(text)
    if text in VERDICTS:
        return f'<td><span class="{text.replace(" ", "-")}">{text}</span></td>'
    if _is_number(v):
        return f'<td class="num">{text}</td>'
    # long text (a claim, its numbers) gets room; short cells stay narrow
    return f'<td class="long">{text}</td>' if len(text) > 60 else f"<td>{text}</td>"


def html_table(frame: pd.DataFrame, decimals: int | None = None) -> str:
    """An HTML table in a horizontally scrolling box (one number format, as Markdown)."""
    fmt = _formatter(frame, decimals)
    # a long header may break after an underscore (world ids like trec_like_best15)
    head = "".join(f"<th>{html.escape(str(c)).replace('_', '_<wbr>')}</th>" for c in frame.columns)
    body = "".join(
        "<tr>" + "".join(_html_cell(v, fmt(i, v)) for i, v in enumerate(row)) + "</tr>"
        for row in frame.itertuples(index=False)
    )
    return (
        f'<div class="table"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"


# ------------------------------------------------------------------------------ writers
def write_markdown(blocks: list[Block], folder: Path, title: str, name: str = "index.md") -> Path:
    """``index.md`` (or ``name``) with its figures under ``figures/`` and tables under
    ``tables/``."""
    (folder / "figures").mkdir(parents=True, exist_ok=True)
    (folder / "tables").mkdir(parents=True, exist_ok=True)
    out = [f"# {title}", ""]
    for b in blocks:
        if b.kind == "heading":
            out += ["#" * b.level + " " + b.text, ""]
        elif b.kind == "text":
            out += [b.text, ""]
        elif b.kind == "banner":
            out += [f"> **{b.text}**", ""]
        elif b.kind == "table":
            b.frame.to_csv(folder / "tables" / f"{b.name}.csv", index=False)
            caption = f"*{b.text}* ([csv](tables/{b.name}.csv))" if b.text else ""
            if b.collapsed:
                out += [
                    "<details><summary>" + html.escape(b.text or b.name) + "</summary>",
                    "",
                    markdown_table(b.frame, b.decimals),
                    "",
                    f"([csv](tables/{b.name}.csv))",
                    "</details>",
                    "",
                ]
            else:
                out += ([caption, ""] if caption else []) + [
                    markdown_table(b.frame, b.decimals),
                    "",
                ]
        elif b.kind == "figure":
            (folder / "figures" / f"{b.name}.png").write_bytes(b.png)
            out += [f"![{b.text or b.name}](figures/{b.name}.png)", ""]
            if b.text:
                out += [f"*{b.text}*", ""]
        elif b.kind == "code":
            out += [f"```{b.name}", b.text.rstrip("\n"), "```", ""]
    path = folder / name
    path.write_text("\n".join(out), encoding="utf-8")
    return path


_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;max-width:1100px;
margin:2em auto;padding:0 1em;color:#222;line-height:1.45}
h1{border-bottom:2px solid #444}h2{border-bottom:1px solid #ccc;margin-top:2em}
div.table{overflow-x:auto;margin:.3em 0 1.2em}
table{border-collapse:collapse;font-size:.85em}
p.caption{font-style:italic;margin-bottom:.2em}
details{margin:.5em 0 1.2em}summary{cursor:pointer;font-style:italic;color:#444}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f0f0f0}td.num{text-align:right;font-variant-numeric:tabular-nums}
img{max-width:100%;height:auto}figure{margin:1em 0 1.5em}
figcaption{font-size:.9em;color:#444;margin-top:.3em}
.banner{background:#fff3cd;border:1px solid #e0c060;padding:.6em 1em;font-weight:bold}
pre{background:#f6f6f6;padding:.8em;overflow-x:auto;font-size:.85em}
.holds{color:#1a7f37;font-weight:bold}.does-not-hold{color:#cf222e;font-weight:bold}
.inconclusive{color:#9a6700;font-weight:bold}
.holds,.does-not-hold,.inconclusive{white-space:nowrap}td.long{min-width:17em}
"""


def write_html(blocks: list[Block], path: Path, title: str) -> Path:
    """One self-contained HTML file: images inline, style inline, no external reference."""
    parts = [f"<h1>{html.escape(title)}</h1>"]
    for b in blocks:
        if b.kind == "heading":
            parts.append(f'<h{b.level} id="{_slug(b.text)}">{html.escape(b.text)}</h{b.level}>')
        elif b.kind == "text":
            parts.append(f"<p>{_inline(b.text)}</p>")
        elif b.kind == "banner":
            parts.append(f'<p class="banner">{html.escape(b.text)}</p>')
        elif b.kind == "table":
            if b.collapsed:
                parts.append(
                    f"<details><summary>{html.escape(b.text or b.name)}</summary>"
                    + html_table(b.frame, b.decimals)
                    + "</details>"
                )
            else:
                cap = f'<p class="caption">{html.escape(b.text)}</p>' if b.text else ""
                parts.append(cap + html_table(b.frame, b.decimals))
        elif b.kind == "figure":
            data = base64.b64encode(b.png).decode("ascii")
            cap = f"<figcaption>{html.escape(b.text)}</figcaption>" if b.text else ""
            parts.append(
                f'<figure><img alt="{html.escape(b.text or b.name)}" '
                f'src="data:image/png;base64,{data}">{cap}</figure>'
            )
        elif b.kind == "code":
            parts.append(f"<pre><code>{html.escape(b.text)}</code></pre>")
    doc = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>\n"
        + "\n".join(parts)
        + "\n</body></html>\n"
    )
    path.write_text(doc, encoding="utf-8")
    return path


def _inline(body: str) -> str:
    """Escape, then render the little Markdown the report's own text uses: `code`, **bold**,
    *italics*, and links to files beside the page (``[text](card.md)``)."""
    s = html.escape(body)
    s = re.sub(r"`([^`]+)`", r"<code>\1</code>", s)
    s = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", s)
    # links to files beside the page only (a report has no external reference)
    s = re.sub(r"\[([^\]]+)\]\(([\w./-]+)\)", r'<a href="\2">\1</a>', s)
    s = re.sub(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])", r"<em>\1</em>", s)
    return s


__all__ = [
    "Block",
    "heading",
    "text",
    "banner",
    "table",
    "figure",
    "code",
    "markdown_table",
    "html_table",
    "write_markdown",
    "write_html",
    "format_value",
]
