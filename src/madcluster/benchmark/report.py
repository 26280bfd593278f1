"""Benchmark results as files and tables: one JSON per row, ``results.md`` rebuilt from all of them.

``results.md`` is regenerated from every result JSON in the folder each time a run finishes (under
a file lock, written atomically), so re-running a row replaces its line and concurrent runs never
drop each other's rows.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from madcluster.atomic import atomic_write_text
from madcluster.benchmark.format import TABLE1_METRICS, markdown_table, mean_std, metric_columns, si
from madcluster.benchmark.schema import BASELINE_MODE, MODE_ROW_NAMES, RESULT_SCHEMA
from madcluster.benchmark.store import json_safe

COLUMNS = metric_columns(("f1", "precision", "recall", *TABLE1_METRICS[1:]))
EXTRA_COLUMNS = metric_columns(("auc_roc", "auc_pr"))
PROTOCOL_ORDER = ("train-quantile", "train-pot", "test-ratio", "combined", "best-f1")
MARKDOWN_NAME = "results.md"
RELEASED_NOTE = (
    "These rows apply steps of the released code's evaluation (`madcluster benchmark "
    "--released-steps`; `madcluster.evaluation.released_protocol`) to measure how much each "
    "inflates the numbers: a = one model per entity with MinMax scaling, b = stride-1 window "
    "scores with a window anomalous if any point in it is, c = best-F1 threshold on the test "
    "labels (**ORACLE**), d = range / VUS on the 0/1 predictions, e = the test set as the "
    "validation set (**LEAK** of test data into training). They are not results of the method."
)


# ----------------------------------------------------------------------------------------- JSON
def _as_dict(result: Any) -> dict[str, Any]:
    """A result dict, from a dict or from anything with ``to_dict()`` (a ``BenchmarkResult``)."""
    return dict(result) if isinstance(result, dict) else result.to_dict()


def write_result(result: dict[str, Any] | Any, out: str | os.PathLike) -> Path:
    """Write ``<out>/<name>.json`` and rebuild ``<out>/results.md``; returns the JSON path."""
    data = _as_dict(result)
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{data['name']}.json"
    text = json.dumps(json_safe(data), indent=1, allow_nan=False)
    with _locked(folder):
        atomic_write_text(path, text + "\n")
        atomic_write_text(folder / MARKDOWN_NAME, markdown_from_folder(folder))
    return path


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no lock, writes are still atomic
        yield
        return
    with open(folder / ".results.lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def load_results(folder: str | os.PathLike) -> list[dict[str, Any]]:
    """Every benchmark result JSON in ``folder`` (other JSON files are skipped), sorted by name."""
    results = []
    for path in sorted(Path(folder).glob("*.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        schema_family = RESULT_SCHEMA.split("/")[0] + "/"
        if isinstance(data, dict) and str(data.get("schema", "")).startswith(schema_family):
            results.append(data)
    return sorted(results, key=_sort_key)


# table order: the paper's ablation rows, the full method, the base model alone, then baselines
_MODE_ORDER = {
    mode: i
    for i, mode in enumerate(("distance-only", "cluster-only", "full", "base-only", BASELINE_MODE))
}
_DATASET_ORDER = {"MSL": 0, "SMAP": 1, "SMD": 2, "PSM": 3}


def _sort_key(r: dict[str, Any]) -> tuple:
    return (
        _DATASET_ORDER.get(r["dataset"], 9),
        r["dataset"],
        r.get("per_entity", False),
        _MODE_ORDER.get(r["mode"], 9),
        r["embedder"],
        r["name"],
    )


# ------------------------------------------------------------------------------------- formatting
def _row_label(r: dict[str, Any]) -> str:
    if r["mode"] == "full":
        label = "MADCluster"
    elif r["mode"] == "base-only":
        label = f"{r['embedder']} {MODE_ROW_NAMES['base-only']}"
    else:
        label = MODE_ROW_NAMES.get(r["mode"], r["embedder"].upper())
    if r["mode"] != "baseline":
        label += f" [{r['embedder']}]"
    else:
        label = {"pca": "PCA (windows)", "kmeans": "KMeans (windows)"}.get(r["embedder"], label)
    if r.get("per_entity"):
        label += ", per entity"
    tag = r.get("settings", {}).get("tag")
    if tag:
        label += f", {tag}"
    released = r.get("released_protocol")
    if released:
        label += f", **{released['label']}**"
    tasks = r.get("tasks") or {}
    if tasks and not tasks.get("complete", True):
        label += f" (partial: {tasks['done']}/{tasks['expected']} tasks)"
    return label


def protocol_table(results: list[dict[str, Any]], protocol: str, *, extra: bool = False) -> str:
    """Markdown table: one row per result, the paper's metric columns for ``protocol``."""
    cols = COLUMNS + (EXTRA_COLUMNS if extra else ())
    rows = [
        [
            r["dataset"],
            _row_label(r),
            len(r["seeds"]),
            *(mean_std(r["protocols"][protocol]["metrics"].get(k)) for k, _ in cols),
        ]
        for r in results
        if protocol in r["protocols"]
    ]
    return markdown_table(["dataset", "detector", "seeds", *(c for _, c in cols)], rows)


def cost_table(results: list[dict[str, Any]]) -> str:
    rows = []
    for r in results:
        c = r["cost"]
        h = c.get("history") or {}
        epochs = h.get("epochs_run", h.get("epochs_run_mean"))
        nu = h.get("final_nu", h.get("final_nu_mean"))
        radius = h.get("final_radius", h.get("final_radius_mean"))
        rows.append(
            [
                r["dataset"],
                _row_label(r),
                f"{c['n_params']:,}",
                si(c["macs_per_window"]),
                *(
                    mean_std(c[k], std=False)
                    for k in ("train_seconds", "score_seconds", "peak_rss_mb")
                ),
                "-" if epochs is None else f"{epochs:g}",
                "-" if nu is None else f"{nu:.4f}",
                "-" if radius is None else f"{radius:.4f}",
            ]
        )
    header = [
        "dataset",
        "detector",
        "params",
        "MACs / window",
        "train s",
        "score s",
        "peak RSS MB",
        "epochs run",
        "final nu",
        "final R",
    ]
    return markdown_table(header, rows)


def markdown_from_folder(folder: str | os.PathLike) -> str:
    results = load_results(folder)
    parts = [
        "# Benchmark results (generated)",
        "",
        (
            "Generated by `madcluster benchmark` from the JSON files in this folder: do not edit "
            "by hand (see README.md for the discussion). Values are mean ± std over seeds. "
            "Predictions are `score > threshold`, no point adjustment. R_A_R / R_A_P / V_ROC / "
            "V_PR (and AUC) use the continuous scores, so they are the same under every protocol "
            "(except in rows with released step d, which compute them on each protocol's 0/1 "
            "predictions). test-ratio and combined use the dataset's known test anomaly ratio (as "
            "the paper). **best-f1 is an ORACLE** (threshold chosen on the test labels)."
        ),
        "",
    ]
    for p in PROTOCOL_ORDER:
        present = [r for r in results if p in r["protocols"]]
        if not present:
            continue
        oracle = present[0]["protocols"][p]["oracle"]
        title = f"## Protocol `{p}`" + (" — ORACLE (uses test labels)" if oracle else "")
        parts += [
            title,
            "",
            present[0]["protocols"][p]["description"],
            "",
            protocol_table(present, p, extra=True),
            "",
        ]
    released = [r for r in results if r.get("released_protocol")]
    if released:
        parts += ["## Rows with steps of the released code's evaluation", "", RELEASED_NOTE, ""]
        for r in released:
            info = r["released_protocol"]
            flags = [w for w, on in (("ORACLE", info["oracle"]), ("LEAK", info["leak"])) if on]
            parts.append(
                f"- `{r['name']}`: {info['label']}; headline protocol `{info['headline_protocol']}`"
                + (f" — **{' and '.join(flags)}**" if flags else "")
            )
        parts.append("")
    costs_note = (
        "Params and MACs per window of L steps (method in each JSON: `cost.macs_method`); times "
        "are per seed (sum over entities when per entity), on this machine."
    )
    parts += ["## Costs", "", costs_note, "", cost_table(results), ""]
    parts += ["## Commands", ""]
    for r in results:
        git = r.get("provenance", {}).get("git", {})
        commit = (git.get("commit") or "?")[:10] + ("+dirty" if git.get("dirty") else "")
        parts.append(f"- `{r['name']}` (commit {commit}): `{r['command']}`")
    return "\n".join(parts) + "\n"


def format_summary(result: dict[str, Any] | Any) -> str:
    """A console table for one result (dict or ``BenchmarkResult``): protocols x metrics."""
    d = _as_dict(result)
    cols = COLUMNS + EXTRA_COLUMNS
    names = [d["protocols"][p]["label"] for p in d["protocols"]]
    width = max(len(n) for n in names) + 2
    cell = 17 if len(d["seeds"]) > 1 else 8
    title = (
        f"{d['name']}: {d['data']['name']} ({d['data']['n_test']} test points, anomaly ratio "
        f"{d['data']['test_anomaly_ratio']:.4f}), seeds {d['seeds']}"
    )
    lines = [
        title,
        "protocol".ljust(width) + "".join(c.rjust(cell) for _, c in cols),
    ]
    for p in d["protocols"]:
        m = d["protocols"][p]["metrics"]
        lines.append(
            d["protocols"][p]["label"].ljust(width)
            + "".join(mean_std(m[k]).rjust(cell) for k, _ in cols)
        )
    c = d["cost"]
    lines.append(
        f"params {c['n_params']:,}, MACs/window {si(c['macs_per_window'])}, train "
        f"{c['train_seconds']['mean']:.1f} s, score {c['score_seconds']['mean']:.1f} s, peak RSS "
        f"+{c['peak_rss_mb']['mean']:.0f} MB (per seed)"
    )
    h = c.get("history") or {}
    if h:
        per_entity = "epochs_run" not in h
        parts = [f"epochs run {h.get('epochs_run', h.get('epochs_run_mean')):g}"]
        if "best_epoch" in h:
            parts[0] += f" (best {h['best_epoch']:g})"
        for key, name in (("final_nu", "final nu"), ("final_radius", "final R")):
            value = h.get(key, h.get(f"{key}_mean"))
            if value is not None:
                parts.append(f"{name} {value:.4f}")
        lines.append(("mean over entities: " if per_entity else "") + ", ".join(parts))
    tasks = d.get("tasks") or {}
    if tasks and not tasks.get("complete", True):
        lines.append(
            f"PARTIAL: {tasks['done']} of {tasks['expected']} tasks finished, {tasks['failed']} "
            "failed; rerun the command to finish the rest"
        )
    lines.append(
        "test-ratio / combined use the known test anomaly ratio; best-f1 is an ORACLE (test labels)"
    )
    released = d.get("released_protocol")
    if released:
        flags = [w for w, on in (("ORACLE", released["oracle"]), ("LEAK", released["leak"])) if on]
        lines.append(
            f"{released['label']} (headline: {released['headline_protocol']})"
            + (f": {' and '.join(flags)}, not a result of the method" if flags else "")
        )
    lines.append(f"reproduce: {d['command']}")
    return "\n".join(lines)
