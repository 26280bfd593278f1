"""Summarise the base-model runs on one dataset (``madcluster benchmark`` JSON files) beside the
paper's Table 1, with the PCA / KMeans window baselines of ``benchmarks/results`` for reference.

    python benchmarks/base_models_summary.py benchmarks/results/base_models_msl \
        benchmarks/results/base_models_msl.md
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

MODELS = ("deepsvdd", "usad", "beatgan", "omnianomaly")
METRICS = (
    "f1",
    "aff_precision",
    "aff_recall",
    "range_auc_roc",
    "range_auc_pr",
    "vus_roc",
    "vus_pr",
)
# Paper Table 1, MSL: F1, Aff-P, Aff-R, R_A_R, R_A_P, V_ROC, V_PR (alone, + MADCluster).
PAPER_MSL = {
    "deepsvdd": (
        (0.37, 0.63, 0.99, 0.63, 0.57, 0.63, 0.28),
        (0.52, 0.74, 0.99, 0.71, 0.65, 0.72, 0.42),
    ),
    "usad": (
        (0.53, 0.71, 0.97, 0.69, 0.66, 0.71, 0.43),
        (0.53, 0.72, 0.97, 0.71, 0.67, 0.72, 0.43),
    ),
    "beatgan": (
        (0.49, 0.71, 0.99, 0.68, 0.63, 0.70, 0.39),
        (0.50, 0.71, 0.99, 0.69, 0.63, 0.71, 0.40),
    ),
    "omnianomaly": (
        (0.42, 0.64, 1.00, 0.63, 0.60, 0.64, 0.31),
        (0.45, 0.64, 1.00, 0.66, 0.60, 0.67, 0.34),
    ),
}
HEADER = (
    "| model | row | F1 | Aff-P | Aff-R | R_A_R | R_A_P | V_ROC | V_PR | F1 (train-quantile) "
    "| epochs run | train s | score s |"
)


def _cell(result: dict, protocol: str, metric: str) -> str:
    stat = result["protocols"][protocol]["metrics"].get(metric)
    if stat is None:
        return "-"
    return f"{stat['mean']:.3f}" + (f" ± {stat['std']:.3f}" if len(result["seeds"]) > 1 else "")


def _row(model: str, label: str, result: dict) -> str:
    cells = [_cell(result, "test-ratio", m) for m in METRICS]
    cost = result.get("cost", {})
    epochs = cost.get("history", {}).get("epochs_run", "-")
    train = cost.get("train_seconds", {}).get("mean", float("nan"))
    score = cost.get("score_seconds", {}).get("mean", float("nan"))
    f1_tq = _cell(result, "train-quantile", "f1")
    lead = f"| {model} | {label} | {' | '.join(cells)} | {f1_tq}"
    return f"{lead} | {epochs} | {train:.0f} | {score:.1f} |"


def summary(folder: Path, reference: Path) -> str:
    runs = {p.stem: json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))}
    dataset = next(iter(runs.values()))["dataset"] if runs else "?"
    rows = [HEADER, "|" + "---|" * 13]
    commands = []
    for model in MODELS:
        for mode, label, paper in (("base-only", "alone", 0), ("full", "+ MADCluster", 1)):
            result = runs.get(f"{dataset}_{model}_{mode}")
            if result is None:
                rows.append(f"| {model} | {label} | (not run) |" + " |" * 11)
                continue
            rows.append(_row(model, label, result))
            commands.append(f"- `{result['name']}`: `{result['command']}`")
            if dataset == "MSL":
                values = " | ".join(f"{v:.2f}" for v in PAPER_MSL[model][paper])
                rows.append(f"| {model} | {label} (paper) | {values} | | | | |")
    baselines = {}
    for name in ("pca", "kmeans"):
        path = reference / f"{dataset}_{name}_baseline.json"
        if path.exists():
            baselines[name] = json.loads(path.read_text())
            rows.append(_row(name, "baseline (benchmarks/results)", baselines[name]))
    return "\n".join(rows), _differences(runs, dataset, baselines), "\n".join(commands)


def _mean(result: dict, metric: str) -> float:
    return result["protocols"]["test-ratio"]["metrics"][metric]["mean"]


def _differences(runs: dict, dataset: str, baselines: dict) -> str:
    """+ MADCluster minus alone (means, test-ratio), and whether either beats both baselines."""
    keys = ("f1", "aff_precision", "vus_roc", "vus_pr")
    rows = [
        "| model | dF1 | dAff-P | dV_ROC | dV_PR | better row beats PCA, KMeans (F1, V_ROC, V_PR)|",
        "|---|---|---|---|---|---|",
    ]
    for model in MODELS:
        alone, plus = runs.get(f"{dataset}_{model}_base-only"), runs.get(f"{dataset}_{model}_full")
        if alone is None or plus is None:
            continue
        deltas = " | ".join(f"{_mean(plus, k) - _mean(alone, k):+.3f}" for k in keys)
        beats = []
        for k in ("f1", "vus_roc", "vus_pr"):
            best = max(_mean(alone, k), _mean(plus, k))
            ok = all(best > _mean(b, k) for b in baselines.values()) if baselines else False
            beats.append("yes" if ok else "no")
        rows.append(f"| {model} | {deltas} | {', '.join(beats)} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="folder of madcluster benchmark JSON files")
    parser.add_argument("out", type=Path, help="markdown file to write")
    parser.add_argument("--reference", type=Path, default=Path("benchmarks/results"))
    args = parser.parse_args(argv)
    table, differences, commands = summary(args.folder, args.reference)
    text = f"""# Base models alone and + MADCluster (generated by benchmarks/base_models_summary.py)

Protocol `test-ratio` (threshold at the test anomaly ratio, as the paper; no point adjustment) for
F1 / Aff-P / Aff-R; R_A_R, R_A_P, V_ROC, V_PR use the continuous scores (protocol-free). F1 under
`train-quantile` (the (1 - 0.01) quantile of training scores) beside it. Budget: see the script
`benchmarks/base_models_msl.sh` (3 epochs max, training stride 20, one torch thread; the seeds are
in each command below, mean ± std where there are several) - far below the paper's training, so
these rows are a smoke-level comparison, not a reproduction.
The full per-protocol tables are in `{args.folder}/results.md`.

{table}

+ MADCluster minus alone (means over seeds, test-ratio; positive = MADCluster helps), and whether
the better of the two rows beats both window baselines:

{differences}

Commands (each JSON also records its git commit and settings):

{commands}
"""
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
