"""Print the README's comparison tables (ours beside the paper's appendix ablation table) from the JSONs.

    .venv/bin/python benchmarks/results/compare_paper.py [--protocol test-ratio]

Reads every ``*.json`` result in this folder (see ``madcluster.evaluation.report.load_results``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from madcluster.evaluation.report import COLUMNS, fmt, load_results

HERE = Path(__file__).resolve().parent

# Appendix table "Impact of Clustering and Distance Mapping" (k = 1): F1, Aff-P, Aff-R
PAPER = {
    ("MSL", "distance-only"): (0.37, 0.63, 0.99),
    ("MSL", "cluster-only"): (0.30, 0.70, 0.66),
    ("MSL", "full"): (0.52, 0.74, 0.99),
    ("SMAP", "distance-only"): (0.40, 0.70, 0.99),
    ("SMAP", "cluster-only"): (0.39, 0.70, 0.95),
    ("SMAP", "full"): (0.49, 0.71, 0.96),
    ("SMD", "distance-only"): (0.19, 0.56, 0.61),
    ("SMD", "cluster-only"): (0.20, 0.58, 0.61),
    ("SMD", "full"): (0.48, 0.83, 0.90),
}
ROW = {
    "distance-only": "DeepSVDD (distance-only)",
    "cluster-only": "Clustering (cluster-only)",
    "full": "MADCluster (full)",
}


def label(r: dict) -> str:
    if r["mode"] == "baseline":
        text = {"pca": "PCA (windows)", "kmeans": "KMeans (windows)"}[r["embedder"]]
    else:
        text = ROW[r["mode"]]
    if r.get("per_entity"):
        text += ", per entity"
    if r.get("settings", {}).get("tag"):
        text += f", {r['settings']['tag']}"
    return text


def table(protocol: str, *, paper: bool) -> str:
    results = load_results(HERE)
    cols = [c for _, c in COLUMNS]
    head = "| dataset | row | seeds | " + " | ".join(cols)
    if paper:
        head += " | paper F1 / Aff-P / Aff-R"
    lines = [head + " |", "|" + "---|" * (3 + len(cols) + int(paper))]
    for r in results:
        m = r["protocols"][protocol]["metrics"]
        line = f"| {r['dataset']} | {label(r)} | {len(r['seeds'])} | " + " | ".join(
            fmt(m[k]) for k, _ in COLUMNS
        )
        if paper:
            ref = PAPER.get((r["dataset"], r["mode"])) if not r.get("per_entity") else None
            line += " | " + (" / ".join(f"{v:.2f}" for v in ref) if ref else "-")
        lines.append(line + " |")
    return "\n".join(lines)


def settings_table() -> str:
    """Settings, costs and the exact command of every result."""
    lines = [
        (
            "| dataset | row | seeds | epochs run (max) | train stride | train s / seed | score s / seed | "
            "peak RSS MB | params | MACs / window | command |"
        ),
        "|" + "---|" * 11,
    ]
    for r in load_results(HERE):
        s, c = r["settings"], r["cost"]
        h = c.get("history") or {}
        run = h.get("epochs_run", h.get("epochs_run_mean"))
        epochs = "-" if r["mode"] == "baseline" else f"{run:.3g} ({s['epochs']})"
        stride = s["stride"] if s["stride"] is not None else "10 (default L/10)"
        lines.append(
            f"| {r['dataset']} | {label(r)} | {len(r['seeds'])} | {epochs} | {stride} | "
            f"{c['train_seconds']['mean']:.0f} | {c['score_seconds']['mean']:.1f} | {c['peak_rss_mb']['mean']:.0f} | "
            f"{c['n_params']:,} | {c['macs_per_window'] / 1e6:.2f}M | `{r['command']}` |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--protocol", default="test-ratio")
    parser.add_argument("--no-paper", action="store_true")
    parser.add_argument(
        "--settings", action="store_true", help="print the settings / cost table instead"
    )
    args = parser.parse_args()
    print(settings_table() if args.settings else table(args.protocol, paper=not args.no_paper))


if __name__ == "__main__":
    main()
