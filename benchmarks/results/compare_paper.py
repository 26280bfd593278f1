"""Print the README's comparison tables (ours beside the paper's appendix ablation table) from the JSONs.

    .venv/bin/python benchmarks/results/compare_paper.py [--protocol test-ratio]

Reads every ``*.json`` result in this folder (see ``madcluster.benchmark.report.load_results``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from madcluster.benchmark.format import markdown_table, mean_std
from madcluster.benchmark.report import COLUMNS, load_results

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
    header = ["dataset", "row", "seeds", *(c for _, c in COLUMNS)] + (["paper F1 / Aff-P / Aff-R"] if paper else [])
    rows = []
    for r in load_results(HERE):
        m = r["protocols"][protocol]["metrics"]
        row = [r["dataset"], label(r), len(r["seeds"]), *(mean_std(m[k]) for k, _ in COLUMNS)]
        if paper:
            ref = PAPER.get((r["dataset"], r["mode"])) if not r.get("per_entity") else None
            row.append(" / ".join(f"{v:.2f}" for v in ref) if ref else "-")
        rows.append(row)
    return markdown_table(header, rows)


def settings_table() -> str:
    """Settings, costs and the exact command of every result."""
    header = ["dataset", "row", "seeds", "epochs run (max)", "train stride", "train s / seed", "score s / seed",
              "peak RSS MB", "params", "MACs / window", "command"]
    rows = []
    for r in load_results(HERE):
        s, c = r["settings"], r["cost"]
        h = c.get("history") or {}
        run = h.get("epochs_run", h.get("epochs_run_mean"))
        epochs = "-" if r["mode"] == "baseline" else f"{run:.3g} ({s['epochs']})"
        stride = s["stride"] if s["stride"] is not None else "10 (default L/10)"
        rows.append([
            r["dataset"], label(r), len(r["seeds"]), epochs, stride, f"{c['train_seconds']['mean']:.0f}",
            f"{c['score_seconds']['mean']:.1f}", f"{c['peak_rss_mb']['mean']:.0f}", f"{c['n_params']:,}",
            f"{c['macs_per_window'] / 1e6:.2f}M", f"`{r['command']}`",
        ])
    return markdown_table(header, rows)


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
