"""The report's content as plain tables, before any HTML or Markdown: result files in, cells out.

Every measured number carries where it came from (the command and commit of its result file), and
anything computed with test labels (an oracle threshold) or with test data in training (a leak) is
flagged, so both renderers can mark it the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from madcluster.benchmark.format import TABLE1_METRICS, mean_std, metric_columns
from madcluster.benchmark.schema import MODE_ROW_NAMES
from madcluster.reporting.decomposition import DECOMPOSITION_STEPS
from madcluster.reporting.paper import PAPER_TABLE1, paper_value

TABLE1_COLUMNS = metric_columns(TABLE1_METRICS)
THRESHOLD_FREE = {"range_auc_roc", "range_auc_pr", "vus_roc", "vus_pr"}
_MODE_ROW = MODE_ROW_NAMES
_MODE_ORDER = ("base-only", "full", "distance-only", "cluster-only", "baseline")


@dataclass
class Cell:
    """One table cell: its text, a tooltip (where the number came from), and a flag such as
    ``oracle``, ``leak``, ``paper`` or ``partial`` that the renderers mark."""

    text: str
    tooltip: str | None = None
    flag: str | None = None
    link: str | None = None  # anchor of the source entry this cell points to


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[Cell]]
    note: str = ""
    flag: str | None = None  # the whole table is an oracle / leak measurement
    anchor: str = ""


@dataclass
class Source:
    """One result file's provenance: what the reader needs to rerun a number."""

    key: str
    name: str
    command: str
    commit: str
    started: str = ""

    @property
    def tooltip(self) -> str:
        return f"{self.name}: {self.command} (commit {self.commit})"


@dataclass
class ReportContent:
    title: str
    folder: str
    protocol: str
    results: list[dict[str, Any]]
    sources: dict[str, Source] = field(default_factory=dict)
    tables: list[Table] = field(default_factory=list)
    datasets: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    read_note: str = ""  # how many result files were read, and how many more --recursive reads
    decomposition_records: list[dict[str, Any]] = field(default_factory=list)  # for its figure
    # anchor -> [(figure key, caption)]
    table_figures: dict[str, list[tuple[str, str]]] = field(default_factory=dict)


# --------------------------------------------------------------------------------------- loading
def source_of(result: dict[str, Any]) -> Source:
    prov = result.get("provenance") or {}
    git = prov.get("git") or {}
    commit = (git.get("commit") or "unknown")[:10] + ("+dirty" if git.get("dirty") else "")
    name = result.get("name", "?")
    key = (result.get("_folder", "") + "/" + name).strip("/")
    return Source(
        key=key,
        name=key,
        command=result.get("command") or prov.get("command") or "?",
        commit=commit,
        started=str(prov.get("started", "")),
    )


def result_flags(result: dict[str, Any]) -> set[str]:
    """``leak`` / ``oracle`` / ``partial`` marks of a whole result (beyond per-protocol oracles):
    any setting whose name or value says leak or oracle, and unfinished task sets."""
    flags: set[str] = set()

    def scan(value: Any, key: str = "") -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                scan(v, str(k))
            return
        if isinstance(value, (list, tuple)):
            for v in value:
                scan(v, key)
            return
        text = f"{key}={value}".lower() if value not in (None, False, "", 0) else ""
        for word in ("leak", "oracle"):
            if word in text:
                flags.add(word)

    scan(result.get("settings") or {})
    if any(isinstance(p, dict) and p.get("leak") for p in (result.get("protocols") or {}).values()):
        flags.add("leak")
    scan((result.get("settings") or {}).get("tag") or "", "tag")
    tasks = result.get("tasks") or {}
    if tasks and not tasks.get("complete", True):
        flags.add("partial")
    return flags


# -------------------------------------------------------------------------------------- Table 1
def model_key(r: dict[str, Any]) -> tuple[str, bool, str]:
    return (
        r["embedder"],
        bool(r.get("per_entity")),
        str((r.get("settings") or {}).get("tag") or ""),
    )


def model_label(key: tuple[str, bool, str], folder: str) -> str:
    model, per_entity, tag = key
    parts = (
        [model]
        + (["per entity"] if per_entity else [])
        + ([tag] if tag else [])
        + ([folder] if folder else [])
    )
    return parts[0] + (f" ({', '.join(parts[1:])})" if len(parts) > 1 else "")


def table1(content: ReportContent, dataset: str, protocol: str) -> Table | None:
    """Table 1's shape for one dataset: per model, the row alone and + MADCluster (and any
    ablation / baseline rows), the seven metrics as mean ± std over seeds, and the paper's row."""
    rows: list[list[Cell]] = []
    results = [r for r in content.results if r["dataset"] == dataset and protocol in r["protocols"]]
    if not results:
        return None
    oracle = any(r["protocols"][protocol].get("oracle") for r in results)
    groups: dict[tuple[tuple[str, bool, str], str], list[dict[str, Any]]] = {}
    for r in results:
        groups.setdefault((model_key(r), r.get("_folder", "")), []).append(r)
    for (key, folder), members in sorted(
        groups.items(), key=lambda item: paper_order(item[0][0][0])
    ):
        members.sort(key=lambda r: _MODE_ORDER.index(r["mode"]) if r["mode"] in _MODE_ORDER else 99)
        for r in members:
            src = content.sources[source_of(r).key]
            flags = result_flags(r)
            flag = (
                "leak"
                if "leak" in flags
                else (
                    "oracle"
                    if oracle or "oracle" in flags
                    else ("partial" if "partial" in flags else None)
                )
            )
            metrics = r["protocols"][protocol]["metrics"]
            seeds = len(r.get("seeds") or [])
            cells = [Cell(model_label(key, folder)), Cell(_MODE_ROW.get(r["mode"], r["mode"]))]
            for metric, _ in TABLE1_COLUMNS:
                metric_flag = None if metric in THRESHOLD_FREE and flag == "oracle" else flag
                cells.append(
                    Cell(
                        mean_std(metrics.get(metric), n=seeds),
                        tooltip=src.tooltip,
                        flag=metric_flag,
                    )
                )
            cells += [
                Cell(str(seeds)),
                Cell(f"[{src.key}]", tooltip=src.tooltip, link=slug(src.key)),
            ]
            rows.append(cells)
            if r["mode"] in ("base-only", "full") and not key[1]:
                paper = [
                    paper_value(dataset, key[0], r["mode"] == "full", m) for m, _ in TABLE1_COLUMNS
                ]
                if any(v is not None for v in paper):
                    rows.append(
                        [Cell(""), Cell(f"{_MODE_ROW[r['mode']]} (paper)", flag="paper")]
                        + [Cell("-" if v is None else f"{v:.2f}", flag="paper") for v in paper]
                        + [Cell(""), Cell("paper, Table 1", flag="paper")]
                    )
    label = results[0]["protocols"][protocol].get("label", protocol)
    description = results[0]["protocols"][protocol].get("description", "")
    note = (
        f"Threshold protocol `{label}`: {description}. F1 / Aff-P / Aff-R depend on it; R_A_R, "
        "R_A_P, V_ROC, V_PR use the continuous scores (the same under every protocol). Mean ± std "
        "over seeds. Hover a number (or follow its source) for the command and commit that "
        "produced it."
    )
    return Table(
        title=f"{dataset}: Table 1 — protocol {label}",
        columns=["model", "row", *(name for _, name in TABLE1_COLUMNS), "seeds", "source"],
        rows=rows,
        note=note,
        flag="oracle" if oracle else None,
        anchor=f"table1-{dataset}-{protocol}",
    )


def paper_order(model: str) -> int:
    """Models in the paper's Table 1 order first (DeepSVDD, USAD, ...), then any others."""
    order = list(next(iter(PAPER_TABLE1.values())))
    return order.index(model) if model in order else len(order)


def slug(key: str) -> str:
    return "src-" + re.sub(r"[^A-Za-z0-9_-]+", "-", key)


# ---------------------------------------------------------------------------- decomposition table
def decomposition_table(records: list[dict[str, Any]]) -> tuple[Table | None, list[Source]]:
    """The evaluation decomposition: honest, then the released protocol's steps
    (a)..(e) added cumulatively, then the paper; (c) is an oracle and (e) a leak, marked as such."""
    rows, sources = [], []
    for i, rec in enumerate(records):
        values = rec.get("values") or {}
        commit = str(rec.get("commit") or "unknown")[:10]
        key = (
            f"decomposition/{rec.get('dataset', '?')}/{rec.get('model', '?')}/"
            f"{rec.get('config', '')}/{rec.get('metric', '')}/{i}"
        )
        src = Source(key=key, name=key, command=str(rec.get("command") or "?"), commit=commit)
        sources.append(src)
        cells = [Cell(str(rec.get(k, ""))) for k in ("dataset", "model", "config", "metric")]
        for step, _, flag in DECOMPOSITION_STEPS:
            value = values.get(step)
            cells.append(
                Cell(
                    "-" if value is None else f"{float(value):.3f}", tooltip=src.tooltip, flag=flag
                )
            )
        paper = rec.get("paper")
        cells.append(Cell("-" if paper is None else f"{float(paper):.2f}", flag="paper"))
        cells.append(Cell(f"[{key}]", tooltip=src.tooltip, link=slug(key)))
        rows.append(cells)
    if not rows:
        return None, []
    note = (
        "Each column adds one step of the released code's evaluation to the previous one, so the "
        "difference between neighbouring columns is what that step adds. (c) picks the threshold "
        "on the test labels (ORACLE); (e) uses the test set as the validation set (test data LEAKS "
        "into training): both are run only to measure the inflation."
    )
    return Table(
        title="Evaluation decomposition: honest -> the released protocol -> the paper",
        columns=[
            "dataset",
            "model",
            "config",
            "metric",
            *(label for _, label, _ in DECOMPOSITION_STEPS),
            "paper",
            "source",
        ],
        rows=rows,
        note=note,
        anchor="decomposition",
    ), sources
