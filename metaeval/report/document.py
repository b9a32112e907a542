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


def heading(text: str, level: int = 2) -> Block:
    return Block("heading", text, level=level)


def text(body: str) -> Block:
    return Block("text", body)


def banner(body: str) -> Block:
    return Block("banner", body)


def table(frame: pd.DataFrame, name: str, caption: str = "") -> Block:
    return Block("table", caption, frame=frame, name=name)


def figure(fig, name: str, caption: str = "") -> Block:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80)
    return Block("figure", caption, figure=fig, name=name, png=buf.getvalue())


def code(body: str, language: str = "") -> Block:
    return Block("code", body, name=language)


# ------------------------------------------------------------------------------ formatting
def format_value(v) -> str:
    if isinstance(v, (float, np.floating)):
        if np.isnan(v):
            return ""
        if float(v).is_integer() and abs(v) < 1e6:
            return str(int(v))
        return f"{v:.4g}" if abs(v) < 1e-3 else f"{v:.3f}"
    return str(v)


def markdown_table(frame: pd.DataFrame) -> str:
    """A pipe table; cells escaped so that a '|' in a measure name cannot break it."""
    cols = [str(c) for c in frame.columns]

    def cell(v):
        return format_value(v).replace("|", "\\|").replace("\n", " ")

    lines = [
        "| " + " | ".join(c.replace("|", "\\|") for c in cols) + " |",
        "|" + "|".join("---" for _ in cols) + "|",
    ]
    lines += [
        "| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)
    ]
    return "\n".join(lines)


VERDICTS = ("holds", "does not hold", "inconclusive")


def _html_cell(v) -> str:
    text = html.escape(format_value(v))
    if text in VERDICTS:
        return f'<td><span class="{text.replace(" ", "-")}">{text}</span></td>'
    number = isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
    return f'<td class="num">{text}</td>' if number else f"<td>{text}</td>"


def html_table(frame: pd.DataFrame) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    body = "".join(
        "<tr>" + "".join(_html_cell(v) for v in row) + "</tr>"
        for row in frame.itertuples(index=False)
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"


# ------------------------------------------------------------------------------ writers
def write_markdown(blocks: list[Block], folder: Path, title: str) -> Path:
    """``index.md`` with its figures under ``figures/`` and tables under ``tables/``."""
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
            if b.text:
                out += [f"*{b.text}* ([csv](tables/{b.name}.csv))", ""]
            out += [markdown_table(b.frame), ""]
        elif b.kind == "figure":
            (folder / "figures" / f"{b.name}.png").write_bytes(b.png)
            out += [f"![{b.text or b.name}](figures/{b.name}.png)", ""]
            if b.text:
                out += [f"*{b.text}*", ""]
        elif b.kind == "code":
            out += [f"```{b.name}", b.text.rstrip("\n"), "```", ""]
    path = folder / "index.md"
    path.write_text("\n".join(out), encoding="utf-8")
    return path


_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;max-width:1100px;
margin:2em auto;padding:0 1em;color:#222;line-height:1.45}
h1{border-bottom:2px solid #444}h2{border-bottom:1px solid #ccc;margin-top:2em}
table{border-collapse:collapse;margin:.5em 0 1.2em;font-size:.85em}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f0f0f0}td.num{text-align:right;font-variant-numeric:tabular-nums}
img{max-width:100%;height:auto}figure{margin:1em 0}figcaption{font-size:.85em;color:#555}
.banner{background:#fff3cd;border:1px solid #e0c060;padding:.6em 1em;font-weight:bold}
pre{background:#f6f6f6;padding:.8em;overflow-x:auto;font-size:.85em}
.holds{color:#1a7f37;font-weight:bold}.does-not-hold{color:#cf222e;font-weight:bold}
.inconclusive{color:#9a6700;font-weight:bold}
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
            cap = f"<p><em>{html.escape(b.text)}</em></p>" if b.text else ""
            parts.append(cap + html_table(b.frame))
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
    """Escape, then render the little Markdown the report's own text uses: `code`, **bold**."""
    s = html.escape(body)
    s = re.sub(r"`([^`]+)`", r"<code>\1</code>", s)
    s = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", s)
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
