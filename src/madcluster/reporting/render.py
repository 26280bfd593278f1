"""The report as one self-contained HTML page (figures inlined as base64 PNG) or as Markdown for
GitHub (figures as PNG files next to it, since GitHub drops data: images)."""

from __future__ import annotations

import base64
import html
import io
import os
import re
from pathlib import Path

from matplotlib.figure import Figure

from madcluster import __version__
from madcluster.atomic import atomic_path, atomic_write_text
from madcluster.reporting.content import build_content
from madcluster.reporting.figures import dataset_figure, decomposition_figure, paper_ticks_drawn
from madcluster.reporting.image_results import add_image_results
from madcluster.reporting.tables import Cell, ReportContent, Table, slug

FORMATS = ("html", "md")
# figures that go with a table rather than a dataset, keyed apart from dataset names
TABLE_FIGURE_CAPTIONS = {
    "decomposition": "Per dataset and metric, each model's honest value (grey) and then, left to "
    "right, what steps a to e add (a bar from the previous value to the next; hatched where the "
    "step lowers "
    "it). The black line is the paper's Table 1 value. Step c is an ORACLE, step e a LEAK.",
}


def table_figure_key(anchor: str) -> str:
    """The key of a table's figure in the figure dict (``#`` + anchor: no dataset name has one)."""
    return f"#{anchor}"


MARKS = {  # flag -> (badge text, what it means, Markdown suffix)
    "oracle": (
        "ORACLE",
        "threshold chosen on the test labels: an upper bound, not a deployable number",
        " †",
    ),
    "leak": (
        "LEAK",
        "test data used in training (test set as validation): measures inflation only",
        " ‡",
    ),
    "partial": ("PARTIAL", "not every task of the run finished", " *"),
    "paper": ("paper", "the paper's published number (its own protocol), for comparison", ""),
}

CSS = """
body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px auto;\
max-width:1250px;color:#222;padding:0 16px}
h1{font-size:1.6em;margin-bottom:4px}\
h2{border-bottom:2px solid #ddd;padding-bottom:4px;margin-top:36px}
h3{font-size:1.05em;margin:22px 0 6px}.meta{color:#666;font-size:.9em}
table{border-collapse:collapse;font-size:.82em;margin:6px 0 4px;width:100%}
th,td{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#f0f3f7}td.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
tr.paper td{color:#555;font-style:italic;background:#fafafa}
td.flag-oracle{background:#fde0dc;color:#8b1a10;font-weight:600}
td.flag-leak{background:#fff1c2;color:#7a5200;font-weight:600}
td.flag-partial{background:#eee}
table.oracle{outline:3px solid #d62728}table.leak{outline:3px solid #e6a000}
.badge{display:inline-block;border-radius:4px;padding:1px 6px;font-size:.78em;font-weight:700;\
margin-left:6px;vertical-align:middle}
.badge.oracle{background:#d62728;color:#fff}.badge.leak{background:#e6a000;color:#fff}
.badge.partial{background:#888;color:#fff}.badge.paper{background:#ddd;color:#333}
.note{color:#555;font-size:.85em;margin:2px 0 10px}.notes li{color:#8a4b00}
figure{margin:10px 0}figure img{max-width:100%;border:1px solid #eee}
code{background:#f4f4f4;padding:0 3px;font-size:.9em}ol.sources li{margin:4px 0;font-size:.85em}
nav ul{columns:2;font-size:.9em}details summary{cursor:pointer;color:#1f4e8c;margin:8px 0}
"""


def figure_png(fig: Figure) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


def _esc(text: str) -> str:
    return html.escape(str(text), quote=True)


def _inline_code(text: str) -> str:
    """Escape ``text`` and turn `backticks` into <code>."""
    parts = _esc(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


# ------------------------------------------------------------------------------------------ HTML
_NUMBER = re.compile(r"^-?[\d.,]+[KMG]?( ± [\d.]+)?$")


def _html_cell(cell: Cell, tag: str = "td") -> str:
    classes = ["num"] if _NUMBER.match(cell.text) else []
    if cell.flag and cell.flag != "paper":
        classes.append(f"flag-{cell.flag}")
    attrs = f' class="{" ".join(classes)}"' if classes else ""
    if cell.tooltip:
        tip = cell.tooltip + (
            f" [{MARKS[cell.flag][0]}: {MARKS[cell.flag][1]}]"
            if cell.flag in MARKS and cell.flag != "paper"
            else ""
        )
        attrs += f' title="{_esc(tip)}"'
    text = _esc(cell.text)
    if cell.link:
        text = f'<a href="#{cell.link}">{text}</a>'
    return f"<{tag}{attrs}>{text}</{tag}>"


def _badge(flag: str | None) -> str:
    return f'<span class="badge {flag}">{MARKS[flag][0]}</span>' if flag in MARKS else ""


def _html_figure(png: bytes, alt: str, caption: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return (
        f'<figure><img alt="{_esc(alt)}" src="data:image/png;base64,{data}">'
        f'<figcaption class="note">{_esc(caption)}</figcaption></figure>'
    )


def _html_table(table: Table, level: int = 3, figure: str = "") -> str:
    classes = "results" + (f" {table.flag}" if table.flag else "")
    head = "".join(f"<th>{_esc(c)}</th>" for c in table.columns)
    body = []
    for row in table.rows:
        paper = all(c.flag == "paper" or not c.text for c in row[1:])
        body.append(
            f"<tr{' class=paper' if paper else ''}>" + "".join(_html_cell(c) for c in row) + "</tr>"
        )
    return (
        f'<h{level} id="{_esc(table.anchor)}">{_esc(table.title)}{_badge(table.flag)}</h{level}><p '
        f'class="note">{_inline_code(table.note)}</p>{figure}<table '
        f'class="{classes}"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
    )


def render_html(content: ReportContent, figures: dict[str, bytes]) -> str:
    """The whole page: marks legend, per dataset its figure and Table 1 under every protocol, the
    decomposition and compute tables, then each source's command and commit."""
    built = (
        f"Built by <code>madcluster report</code> {__version__}: {_esc(content.read_note)}. "
        f"Default protocol: <code>{_esc(content.protocol)}</code>."
    )
    marks = "; ".join(f"{_badge(k)} {_esc(v[1])}" for k, v in MARKS.items())
    parts = [
        f"<h1>{_esc(content.title)}</h1>",
        f'<p class="meta">{built}</p>',
        f'<p class="note">Marks: {marks}.</p>',
    ]
    if content.notes:
        parts.append(
            '<ul class="notes">'
            + "".join(f"<li>{_inline_code(n)}</li>" for n in content.notes)
            + "</ul>"
        )
    toc = [f'<li><a href="#dataset-{_esc(d)}">{_esc(d)}</a></li>' for d in content.datasets]
    toc += [
        f'<li><a href="#{_esc(t.anchor)}">{_esc(t.title)}</a></li>'
        for t in content.tables
        if not t.anchor.startswith("table1-")
    ]
    toc.append('<li><a href="#sources">Sources: command and commit of every number</a></li>')
    parts.append("<nav><ul>" + "".join(toc) + "</ul></nav>")
    for dataset in content.datasets:
        parts.append(f'<section id="dataset-{_esc(dataset)}"><h2>{_esc(dataset)}</h2>')
        if dataset in figures:
            data = base64.b64encode(figures[dataset]).decode("ascii")
            ticks = (
                "black ticks: the paper's Table 1"
                if paper_ticks_drawn(content, dataset, content.protocol)
                else "the paper's Table 1 has no value for these rows, so no paper ticks"
            )
            parts.append(
                f'<figure><img alt="{_esc(dataset)}: V_PR and F1 per model" '
                f'src="data:image/png;base64,{data}"><figcaption class="note">V_PR and F1 '
                f"({_esc(content.protocol)}) per model and row, mean ± std over seeds; "
                f"{ticks}.</figcaption></figure>"
            )
        hidden = []
        for table in (t for t in content.tables if t.anchor.startswith(f"table1-{dataset}-")):
            shown = table.anchor.endswith(f"-{content.protocol}") or table.flag
            (parts if shown else hidden).append(_html_table(table))
        if hidden:
            parts.append(
                "<details><summary>Table 1 under the other non-oracle protocols "
                f"({len(hidden)})</summary>" + "".join(hidden) + "</details>"
            )
        parts.append("</section>")
    for table in (t for t in content.tables if not t.anchor.startswith("table1-")):
        png = figures.get(table_figure_key(table.anchor))
        figure = (
            _html_figure(png, table.title, TABLE_FIGURE_CAPTIONS.get(table.anchor, ""))
            if png
            else ""
        )
        after = "".join(
            _html_figure(figures[key], caption, caption)
            for key, caption in content.table_figures.get(table.anchor, [])
            if key in figures
        )
        parts.append(f"<section>{_html_table(table, level=2, figure=figure)}{after}</section>")
    items = [
        f'<li id="{slug(s.key)}"><b>{_esc(s.name)}</b> — commit <code>{_esc(s.commit)}</code>'
        f"{(' — ' + _esc(s.started)) if s.started else ''}<br><code>{_esc(s.command)}</code></li>"
        for s in content.sources.values()
    ]
    parts.append(
        '<section id="sources"><h2>Sources: command and commit of every number</h2>'
        f'<ol class="sources">{"".join(items)}</ol></section>'
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{_esc(content.title)}</title><style>{CSS}</style></head><body>\n"
        + "\n".join(parts)
        + "\n</body></html>\n"
    )


# -------------------------------------------------------------------------------------- Markdown
def _md_cell(cell: Cell) -> str:
    text = cell.text.replace("|", "\\|")
    if cell.flag == "paper" and text not in ("", "-"):
        text = f"_{text}_"
    elif cell.flag in MARKS:
        text += MARKS[cell.flag][2]
    return text


def _md_table(table: Table, figure: str | None = None) -> str:
    flag = f" — **{MARKS[table.flag][0]}**" if table.flag in MARKS else ""
    lines = [f"### {table.title}{flag}", "", table.note, ""]
    if figure:
        lines += [f"![{table.title}]({figure})", ""]
    lines += ["| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in table.rows]
    return "\n".join(lines) + "\n"


def render_markdown(content: ReportContent, figure_files: dict[str, str]) -> str:
    """GitHub Markdown: the same sections; marks as † (oracle), ‡ (leak), * (partial),
    _paper_."""
    marks = "; ".join(
        f"{v[2].strip() or '_italic_'} {k.upper() if k != 'paper' else 'paper'}: {v[1]}"
        for k, v in MARKS.items()
    )
    built = (
        f"Built by `madcluster report` {__version__}: {content.read_note}. "
        f"Default protocol: `{content.protocol}`."
    )
    out = [f"# {content.title}", "", built, "", f"Marks: {marks}.", ""]
    out += [f"- {n}" for n in content.notes] + ([""] if content.notes else [])
    for dataset in content.datasets:
        out += [f"## {dataset}", ""]
        if dataset in figure_files:
            out += [f"![{dataset}: V_PR and F1 per model]({figure_files[dataset]})", ""]
        for table in (t for t in content.tables if t.anchor.startswith(f"table1-{dataset}-")):
            out.append(_md_table(table))
    for table in (t for t in content.tables if not t.anchor.startswith("table1-")):
        out.append(_md_table(table, figure_files.get(table_figure_key(table.anchor))))
        out += [
            f"![{caption}]({figure_files[key]})\n"
            for key, caption in content.table_figures.get(table.anchor, [])
            if key in figure_files
        ]
    out += ["## Sources: command and commit of every number", ""]
    out += [f"- `{s.name}` (commit `{s.commit}`): `{s.command}`" for s in content.sources.values()]
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------------------- write
def report_format(output: str | os.PathLike, fmt: str | None = None) -> str:
    """``fmt`` if given, else from the output's suffix (.md / .markdown -> md, anything else
    html)."""
    if fmt is not None:
        if fmt not in FORMATS:
            raise ValueError(f"unknown report format {fmt!r}; choose one of {', '.join(FORMATS)}")
        return fmt
    return "md" if Path(output).suffix.lower() in (".md", ".markdown") else "html"


def write_report(
    folder: str | os.PathLike,
    output: str | os.PathLike,
    *,
    fmt: str | None = None,
    protocol: str = "test-ratio",
    decomposition: str | os.PathLike | None = None,
    compute_table: str | os.PathLike | None = None,
    recursive: bool = False,
    title: str | None = None,
) -> ReportContent:
    """Build the report of ``folder`` and write it to ``output`` (HTML or Markdown), atomically.

    Markdown writes its figures to ``<output stem>_figures/<dataset>.png`` beside it.
    """
    kind = report_format(output, fmt)
    content = build_content(
        folder,
        protocol=protocol,
        decomposition=decomposition,
        compute_table=compute_table,
        recursive=recursive,
        title=title,
    )
    images: dict[str, bytes] = {}
    for dataset in content.datasets:
        fig = dataset_figure(content, dataset, protocol)
        if fig is not None:
            images[dataset] = figure_png(fig)
    fig = decomposition_figure(content.decomposition_records)
    if fig is not None:
        images[table_figure_key("decomposition")] = figure_png(fig)
    # `madcluster benchmark --images`
    images |= add_image_results(content, Path(folder), recursive=recursive)
    out = Path(output)
    if kind == "html":
        atomic_write_text(out, render_html(content, images))
        return content
    fig_dir = out.with_name(out.stem + "_figures")
    files = {}
    if images:
        fig_dir.mkdir(parents=True, exist_ok=True)
    for key, png in images.items():
        name = f"table-{key[1:]}" if key.startswith("#") else key
        target = fig_dir / f"{name}.png"
        with atomic_path(target) as tmp:
            Path(tmp).write_bytes(png)
        files[key] = f"{fig_dir.name}/{target.name}"
    atomic_write_text(out, render_markdown(content, files))
    return content
