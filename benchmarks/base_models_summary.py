"""The Table-1-shaped summary of the base-model runs: every ``benchmarks/results/base_models_<ds>``
folder (``madcluster benchmark`` JSON files), each model alone and + MADCluster beside the paper's
Table 1, with the PCA / KMeans window baselines of ``benchmarks/results`` for reference, and a
verdict per model-dataset pair at the top.

    python benchmarks/base_models_summary.py benchmarks/results      # writes results/table1.md
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

MODELS = ("deepsvdd", "usad", "beatgan", "omnianomaly", "thoc", "anomaly_transformer", "dcdetector")
DATASETS = ("MSL", "SMAP", "SMD", "PSM")
METRICS = ("f1", "aff_precision", "aff_recall", "range_auc_roc", "range_auc_pr", "vus_roc", "vus_pr")
NAMES = ("F1", "Aff-P", "Aff-R", "R_A_R", "R_A_P", "V_ROC", "V_PR")

# The paper's Table 1 (F1, Aff-P, Aff-R, R_A_R, R_A_P, V_ROC, V_PR): (alone, + MADCluster).
_T = tuple[float, ...]
PAPER: dict[str, dict[str, tuple[_T, _T]]] = {
    "MSL": {
        "deepsvdd": ((.37, .63, .99, .63, .57, .63, .28), (.52, .74, .99, .71, .65, .72, .42)),
        "usad": ((.53, .71, .97, .69, .66, .71, .43), (.53, .72, .97, .71, .67, .72, .43)),
        "beatgan": ((.49, .71, .99, .68, .63, .70, .39), (.50, .71, .99, .69, .63, .71, .40)),
        "omnianomaly": ((.42, .64, 1.0, .63, .60, .64, .31), (.45, .64, 1.0, .66, .60, .67, .34)),
        "thoc": ((.50, .75, .96, .70, .64, .71, .41), (.55, .81, .99, .70, .68, .72, .46)),
        "anomaly_transformer": (
            (.50, .70, .99, .69, .64, .70, .40), (.51, .71, .99, .69, .64, .71, .40)),
        "dcdetector": ((.28, .51, .86, .54, .49, .52, .19), (.41, .64, .99, .64, .63, .64, .32)),
    },
    "SMAP": {
        "deepsvdd": ((.40, .70, .99, .67, .57, .67, .33), (.49, .71, .96, .69, .61, .71, .38)),
        "usad": ((.44, .68, .98, .69, .61, .69, .35), (.45, .67, 1.0, .69, .61, .71, .36)),
        "beatgan": ((.47, .70, 1.0, .69, .62, .71, .38), (.48, .70, 1.0, .70, .62, .72, .38)),
        "omnianomaly": ((.37, .64, 1.0, .64, .56, .65, .30), (.43, .64, 1.0, .69, .58, .71, .34)),
        "thoc": ((.42, .66, .99, .67, .59, .68, .35), (.44, .66, 1.0, .68, .57, .70, .33)),
        "anomaly_transformer": (
            (.44, .66, 1.0, .69, .60, .70, .35), (.45, .67, 1.0, .69, .60, .71, .36)),
        "dcdetector": ((.21, .48, .81, .51, .39, .50, .13), (.43, .67, .98, .67, .60, .69, .33)),
    },
    "SMD": {
        "deepsvdd": ((.19, .56, .61, .53, .46, .53, .12), (.48, .83, .90, .63, .56, .64, .29)),
        "usad": ((.46, .80, .63, .63, .55, .62, .26), (.45, .82, .61, .63, .57, .63, .26)),
        "beatgan": ((.50, .84, .62, .64, .56, .65, .31), (.52, .85, .64, .65, .55, .66, .31)),
        "omnianomaly": ((.48, .78, .63, .63, .57, .64, .28), (.49, .82, .68, .64, .56, .65, .29)),
        "thoc": ((.32, .70, .72, .61, .46, .61, .18), (.35, .72, .71, .61, .52, .61, .20)),
        "anomaly_transformer": (
            (.51, .84, .65, .65, .59, .66, .31), (.52, .84, .65, .65, .59, .66, .31)),
        "dcdetector": ((.17, .51, .98, .53, .31, .52, .12), (.29, .64, .72, .58, .42, .58, .16)),
    },
    "PSM": {
        "deepsvdd": ((.66, .67, .56, .52, .63, .51, .36), (.67, .68, 1.0, .58, .69, .58, .46)),
        "usad": ((.52, .56, .99, .57, .69, .56, .38), (.52, .56, .99, .58, .69, .56, .38)),
        "beatgan": ((.66, .68, .70, .63, .67, .63, .49), (.68, .74, .80, .67, .69, .66, .49)),
        "omnianomaly": ((.53, .55, .98, .54, .67, .53, .38), (.53, .55, .98, .54, .67, .53, .38)),
        "thoc": ((.50, .55, 1.0, .52, .69, .51, .36), (.50, .55, 1.0, .52, .69, .51, .36)),
        "anomaly_transformer": (
            (.53, .55, .98, .54, .67, .53, .38), (.54, .56, .94, .55, .67, .54, .39)),
        "dcdetector": ((.50, .55, 1.0, .52, .69, .51, .36), (.53, .57, .86, .55, .63, .54, .40)),
    },
}
ROWS = (("base-only", "alone", 0), ("full", "+ MADCluster", 1))
HEADER = "| model | row | " + " | ".join(NAMES) + " | F1 (train-quantile) | seeds | epochs run | train s | score s |"


def _stat(result: dict, metric: str, protocol: str = "test-ratio") -> dict | None:
    return result["protocols"][protocol]["metrics"].get(metric)


def _cell(result: dict, metric: str, protocol: str = "test-ratio") -> str:
    stat = _stat(result, metric, protocol)
    if stat is None:
        return "-"
    return f"{stat['mean']:.3f}" + (f" ± {stat['std']:.3f}" if len(result["seeds"]) > 1 else "")


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
    return f"""# Table 1: base models alone and + MADCluster (generated by benchmarks/base_models_summary.py)

Rebuild: `python benchmarks/base_models_summary.py benchmarks/results`; the runs:
`bash benchmarks/base_models.sh DATASET [MODEL ...]` (budget in the commands below: epochs, training
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
