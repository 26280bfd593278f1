"""The Table-1-shaped summary of the base-model runs: every ``benchmarks/results/base_models_<ds>``
folder (``madcluster benchmark`` JSON files), each model alone and + MADCluster beside the paper's
Table 1, with the PCA / KMeans window baselines of ``benchmarks/results`` for reference, and a
verdict per model-dataset pair at the top.

    python benchmarks/tables/base_models_summary.py benchmarks/results      # writes results/table1.md
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from madcluster.benchmark.format import METRIC_LABELS, TABLE1_METRICS, mean_std
from madcluster.reporting.paper import PAPER_TABLE1

MODELS = ("deepsvdd", "usad", "beatgan", "omnianomaly", "thoc", "anomaly_transformer", "dcdetector")
DATASETS = ("MSL", "SMAP", "SMD", "PSM")
METRICS = TABLE1_METRICS
NAMES = tuple(METRIC_LABELS[m] for m in METRICS)

PAPER = PAPER_TABLE1  # the paper's Table 1: (alone, + MADCluster) per dataset and model
ROWS = (("base-only", "alone", 0), ("full", "+ MADCluster", 1))
HEADER = "| model | row | " + " | ".join(NAMES) + " | F1 (train-quantile) | seeds | epochs run | train s | score s |"


def _stat(result: dict, metric: str, protocol: str = "test-ratio") -> dict | None:
    return result["protocols"][protocol]["metrics"].get(metric)


def _cell(result: dict, metric: str, protocol: str = "test-ratio") -> str:
    return mean_std(_stat(result, metric, protocol), n=len(result["seeds"]))


def _row(model: str, label: str, result: dict) -> str:
    cells = " | ".join(_cell(result, m) for m in METRICS)
    cost = result.get("cost", {})
    epochs = cost.get("history", {}).get("epochs_run", "-")
    train = cost.get("train_seconds", {}).get("mean", float("nan"))
    score = cost.get("score_seconds", {}).get("mean", float("nan"))
    seeds = len(result["seeds"])
    return (f"| {model} | {label} | {cells} | {_cell(result, 'f1', 'train-quantile')} | {seeds} "
            f"| {epochs} | {train:.0f} | {score:.1f} |")


def verdict(alone: dict, plus: dict, metric: str = "vus_pr") -> tuple[float, str]:
    """+ MADCluster minus alone, and whether the change exceeds the seed spread.

    "beyond the seed spread" means |delta of the means| > std(alone) + std(+ MADCluster); with one
    seed there is no spread, so the verdict says so instead of guessing.
    """
    a, p = _stat(alone, metric), _stat(plus, metric)
    delta = p["mean"] - a["mean"]
    if min(len(alone["seeds"]), len(plus["seeds"])) < 2:
        return delta, "one seed: no spread"
    spread = a["std"] + p["std"]
    if abs(delta) <= spread:
        return delta, "unchanged"
    return delta, "raised" if delta > 0 else "lowered"


def _load(folder: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))}


def summarise(results: Path) -> str:
    """The whole ``table1.md`` text from ``results`` (the benchmarks/results folder)."""
    verdicts = [
        "| dataset | model | V_PR alone | V_PR + MADCluster | delta | verdict "
        + "| better row vs PCA / KMeans (V_PR) |",
        "|---|---|---|---|---|---|---|",
    ]
    counts: dict[str, int] = {}
    sections, commands = [], []
    for dataset in DATASETS:
        folder = results / f"base_models_{dataset.lower()}"
        if not folder.is_dir():
            continue
        runs = _load(folder)
        baselines = {name: json.loads(path.read_text()) for name in ("pca", "kmeans")
                     if (path := results / f"{dataset}_{name}_baseline.json").exists()}
        rows = [HEADER, "|" + "---|" * (len(NAMES) + 7)]
        for model in MODELS:
            found = {mode: runs.get(f"{dataset}_{model}_{mode}") for mode, _, _ in ROWS}
            if not any(found.values()):
                continue
            for mode, label, index in ROWS:
                result = found[mode]
                if result is None:
                    rows.append(f"| {model} | {label} | (not run) |" + " |" * (len(NAMES) + 4))
                else:
                    rows.append(_row(model, label, result))
                    commands.append(f"- `{result['name']}` (`{_commit(result)}`): `{result['command']}`")
                if model in PAPER.get(dataset, {}):
                    values = " | ".join(f"{v:.2f}" for v in PAPER[dataset][model][index])
                    rows.append(f"| {model} | {label} (paper) | {values} | | | | | |")
            alone, plus = found["base-only"], found["full"]
            if alone and plus:
                delta, word = verdict(alone, plus)
                counts[word] = counts.get(word, 0) + 1
                best = max(_stat(alone, "vus_pr")["mean"], _stat(plus, "vus_pr")["mean"])
                versus = ", ".join(
                    f"{name} {_stat(b, 'vus_pr')['mean']:.3f} ({'above' if best > _stat(b, 'vus_pr')['mean'] else 'below'})"
                    for name, b in baselines.items()) or "-"
                verdicts.append(f"| {dataset} | {model} | {_cell(alone, 'vus_pr')} | {_cell(plus, 'vus_pr')} "
                                f"| {delta:+.3f} | {word} | {versus} |")
        for name, result in baselines.items():
            rows.append(_row(name, "window baseline", result))
            commands.append(f"- `{result['name']}`: `{result['command']}`")
        sections.append(f"## {dataset}\n\n" + "\n".join(rows))
    tally = ", ".join(f"{n} {word}" for word, n in sorted(counts.items())) or "none yet"
    return f"""# Table 1: base models alone and + MADCluster (generated by benchmarks/tables/base_models_summary.py)

Rebuild: `python benchmarks/tables/base_models_summary.py benchmarks/results`; the runs:
`bash benchmarks/tables/base_models.sh DATASET [MODEL ...]` (budget in the commands below: epochs, training
stride, seeds; one torch thread; the same budget for "alone" and "+ MADCluster" of a model). These
budgets are far below the paper's training, so the rows are a CPU-sized comparison, not a
reproduction.

Protocol `test-ratio` (threshold at the test anomaly ratio, as the paper; no point adjustment) for
F1 / Aff-P / Aff-R; R_A_R, R_A_P, V_ROC, V_PR use the continuous scores (protocol-free). F1 under
`train-quantile` (the (1 - 0.01) quantile of training scores) beside it. Mean ± std over seeds where
there are several. The paper's numbers (its Table 1) are under each row.

## Does + MADCluster raise VUS-PR? ({tally})

"raised" / "lowered": |delta of the means| > std(alone) + std(+ MADCluster) over seeds;
"unchanged" otherwise; a pair run with one seed has no spread and is reported as such.

{chr(10).join(verdicts)}

{chr(10).join(sections)}

## Commands (each JSON also records its settings and provenance)

{chr(10).join(commands)}
"""


def _commit(result: dict) -> str:
    git = result.get("provenance", {}).get("git") or {}
    return str(git.get("commit", "?"))[:10] if isinstance(git, dict) else str(git)[:10]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, nargs="?", default=Path("benchmarks/results"),
                        help="the folder holding base_models_<dataset>/ and the baseline JSONs")
    parser.add_argument("--out", type=Path, help="markdown file (default RESULTS/table1.md)")
    args = parser.parse_args(argv)
    text = summarise(args.results)
    out = args.out or args.results / "table1.md"
    tmp = out.with_suffix(".md.tmp")
    tmp.write_text(text)
    tmp.replace(out)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
