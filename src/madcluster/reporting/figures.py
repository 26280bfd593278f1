"""Per-dataset figures of the report: each model's rows side by side, with the paper's values."""

from __future__ import annotations

import textwrap
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from madcluster.benchmark.schema import MODE_ROW_NAMES
from madcluster.reporting.paper import paper_value
from madcluster.reporting.tables import ReportContent, model_key, model_label, paper_order

_ROW_COLORS = {
    "base-only": "#9ecae1",
    "full": "#3182bd",
    "distance-only": "#a1d99b",
    "cluster-only": "#fdae6b",
    "baseline": "#bdbdbd",
}
_ROW_NAMES = {mode: MODE_ROW_NAMES[mode] for mode in ("base-only", "full")}


#: More models than this and the bars turn horizontal, so every label stays readable.
MAX_VERTICAL_GROUPS = 12
_LABEL_WIDTH = 38


def paper_ticks_drawn(content: ReportContent, dataset: str, protocol: str) -> bool:
    """Whether :func:`dataset_figure` draws any paper tick (the caption mentions them only then)."""
    return any(
        paper_value(dataset, r["embedder"], r["mode"] == "full", metric) is not None
        for r in content.results
        if r["dataset"] == dataset
        and protocol in r["protocols"]
        and r["mode"] in ("base-only", "full")
        and not r.get("per_entity")
        for metric in ("vus_pr", "f1")
    )


def dataset_figure(content: ReportContent, dataset: str, protocol: str) -> Figure | None:
    """Bars of V_PR (protocol-free) and F1 (under ``protocol``) per model and row, mean ± std over
    seeds, with the paper's Table 1 value as a black tick where it has one. Up to
    ``MAX_VERTICAL_GROUPS`` models side by side; more become horizontal bars, one labelled row
    per model, so labels never overlap."""
    results = [r for r in content.results if r["dataset"] == dataset and protocol in r["protocols"]]
    if not results:
        return None
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        groups.setdefault(model_label(model_key(r), r.get("_folder", "")), []).append(r)
    groups = dict(sorted(groups.items(), key=lambda item: paper_order(item[1][0]["embedder"])))
    modes = [m for m in _ROW_COLORS if any(r["mode"] == m for r in results)]
    modes += sorted({r["mode"] for r in results} - set(modes))
    horizontal = len(groups) > MAX_VERTICAL_GROUPS
    names = [textwrap.fill(name, _LABEL_WIDTH) for name in groups]
    if horizontal:  # one row per model: the figure grows down, labels are wrapped at the left
        lines = max(name.count("\n") + 1 for name in names)  # 8-point text: ~0.14 inch a line
        row = max(0.25 * max(1.0, 0.5 * len(modes)), 0.14 * lines + 0.1)
        fig = Figure(figsize=(12.0, 2.0 + row * len(groups)), dpi=100)
        axes = fig.subplots(1, 2, sharey=True)
    else:
        fig = Figure(figsize=(min(16.0, max(7.0, 1.3 * len(groups) + 3)), 6.4), dpi=100)
        axes = fig.subplots(2, 1, sharex=True)
    width = 0.8 / max(len(modes), 1)
    oracle = any(r["protocols"][protocol].get("oracle") for r in results)
    paper_labelled = False
    for ax, metric, label in (
        (axes[0], "vus_pr", "V_PR (protocol-free)"),
        (axes[1], "f1", f"F1 ({protocol}{', ORACLE' if oracle else ''})"),
    ):
        for j, mode in enumerate(modes):
            xs, means, stds, paper_x, paper_y = [], [], [], [], []
            for i, members in enumerate(groups.values()):
                r = next((m for m in members if m["mode"] == mode), None)
                if r is None:
                    continue
                stat = r["protocols"][protocol]["metrics"].get(metric) or {}
                if stat.get("mean") is None:
                    continue
                x = i - 0.4 + width * (j + 0.5)
                xs.append(x)
                means.append(stat["mean"])
                stds.append(stat.get("std") or 0.0 if len(r.get("seeds") or []) > 1 else 0.0)
                if mode in ("base-only", "full") and not r.get("per_entity"):
                    value = paper_value(dataset, r["embedder"], mode == "full", metric)
                    if value is not None:
                        paper_x.append(x)
                        paper_y.append(value)
            style = {
                "color": _ROW_COLORS.get(mode, "#dddddd"),
                "label": _ROW_NAMES.get(mode, mode),
                "edgecolor": "#d62728" if (oracle and metric == "f1") else "none",
            }
            if horizontal:
                ax.barh(xs, means, width * 0.9, xerr=stds, capsize=2, **style)
            else:
                ax.bar(xs, means, width * 0.9, yerr=stds, capsize=2, **style)
            if paper_x:
                points = (paper_y, paper_x) if horizontal else (paper_x, paper_y)
                ax.scatter(
                    *points,
                    marker="|" if horizontal else "_",
                    s=220,
                    color="black",
                    zorder=4,
                    label=None if paper_labelled else "paper (Table 1)",
                )
                paper_labelled = True
        limit = (
            0,
            1.0
            if metric == "f1"
            else max(0.5, (ax.get_xlim() if horizontal else ax.get_ylim())[1]),
        )
        if horizontal:  # a tall figure: the metric and its scale on top, where reading starts
            ax.set_xlabel(label)
            ax.xaxis.set_label_position("top")
            ax.tick_params(labeltop=True)
            ax.set_xlim(*limit)
            ax.grid(axis="x", alpha=0.3)
        else:
            ax.set_ylabel(label)
            ax.set_ylim(*limit)
            ax.grid(axis="y", alpha=0.3)
    handles, labels = [], []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    if horizontal:
        axes[0].set_yticks(np.arange(len(groups)))
        axes[0].set_yticklabels(names, fontsize=8)
        axes[0].invert_yaxis()  # the first model on top, as in the tables
        fig.legend(handles, labels, fontsize=8, ncol=min(len(labels), 4), loc="upper center")
    else:
        axes[0].legend(handles, labels, fontsize=8, ncol=min(len(labels), 4), loc="upper right")
        axes[1].set_xticks(np.arange(len(groups)))
        axes[1].set_xticklabels(names, rotation=20, ha="right", fontsize=8)
    fig.suptitle(f"{dataset}: each model alone and + MADCluster", fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 0.97) if horizontal else None)
    return fig


# The decomposition's waterfall: honest first, then each step's change, oracle / leak steps named.
_STEP_COLORS = {
    "honest": "#969696",
    "a": "#3182bd",
    "b": "#31a354",
    "c": "#d62728",
    "d": "#756bb1",
    "e": "#e6550d",
}
_STEP_LABELS = {
    "honest": "honest",
    "a": "(a) per entity",
    "b": "(b) window labels",
    "c": "(c) best-F1 threshold: ORACLE",
    "d": "(d) range metrics on 0/1",
    "e": "(e) test set as validation: LEAK",
}
_DECOMPOSITION_METRICS = (("f1", "F1"), ("vus_pr", "V_PR"))


def decomposition_figure(records: list[dict[str, Any]]) -> Figure | None:
    """One waterfall per dataset and metric (F1, V_PR): for each model, the honest value and then
    what each released-protocol step adds (a floating bar from the previous value to the next;
    hatched where the step lowers it), with the paper's value as a black line over the group."""
    cells: dict[str, dict[tuple[str, str], dict[str, dict[str, Any]]]] = {}
    for rec in records:
        if rec.get("metric") not in dict(_DECOMPOSITION_METRICS) or not rec.get("values"):
            continue
        section = (str(rec.get("model", "?")), str(rec.get("config", "")))
        cells.setdefault(str(rec.get("dataset", "?")), {}).setdefault(section, {})[
            rec["metric"]
        ] = rec
    if not cells:
        return None
    steps = list(_STEP_COLORS)
    most = max(len(sections) for sections in cells.values())
    fig = Figure(figsize=(min(18.0, max(8.0, 0.9 * most + 3)), 2.9 * len(cells) + 1.0), dpi=100)
    axes = np.atleast_2d(fig.subplots(len(cells), len(_DECOMPOSITION_METRICS), squeeze=False))
    width = 0.8 / len(steps)
    paper_drawn = False
    for row, (dataset, sections) in enumerate(cells.items()):
        names = sorted(sections)
        for col, (metric, label) in enumerate(_DECOMPOSITION_METRICS):
            ax = axes[row, col]
            for i, section in enumerate(names):
                rec = sections[section].get(metric)
                if rec is None:
                    continue
                previous = 0.0
                for j, step in enumerate(steps):
                    value = rec["values"].get(step)
                    if value is None:
                        continue
                    low, high = sorted((previous, float(value)))
                    ax.bar(
                        i - 0.4 + width * (j + 0.5),
                        max(high - low, 0.002),
                        width * 0.9,
                        bottom=low,
                        color=_STEP_COLORS[step],
                        hatch="///" if float(value) < previous else None,
                        edgecolor="white" if float(value) < previous else "none",
                        linewidth=0,
                    )
                    previous = float(value)
                if rec.get("paper") is not None:
                    paper_drawn = True
                    ax.hlines(
                        float(rec["paper"]),
                        i - 0.42,
                        i + 0.42,
                        color="black",
                        linewidth=1.6,
                        zorder=4,
                    )
            ax.set_xticks(np.arange(len(names)))
            ax.set_xticklabels(
                [m if c == "default" else f"{m} ({c})" for m, c in names],
                rotation=25,
                ha="right",
                fontsize=7,
            )
            ax.set_xlim(-0.6, max(len(names), 1) - 0.4)
            ax.set_ylim(0, max(0.7, ax.get_ylim()[1]))
            ax.set_ylabel(f"{dataset}: {label}", fontsize=9)
            ax.grid(axis="y", alpha=0.3)
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [Patch(color=_STEP_COLORS[s], label=_STEP_LABELS[s]) for s in steps]
    if paper_drawn:
        handles.append(Line2D([], [], color="black", linewidth=1.6, label="paper (Table 1)"))
    inch = 1.0 / fig.get_figheight()  # one inch in figure coordinates: title, then the legend
    fig.suptitle(
        "Evaluation decomposition: honest, then what each step of the released protocol adds",
        fontsize=11,
        y=1 - 0.08 * inch,
        va="top",
    )
    fig.legend(
        handles=handles,
        loc="upper center",
        bbox_to_anchor=(0.5, 1 - 0.35 * inch),
        ncol=4,
        fontsize=8,
        frameon=False,
    )
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.8 * inch))
    return fig
