"""The evaluation decomposition (issue 10): from the honest number to the released code's, step by step.

For one model, configuration and dataset, runs ``madcluster benchmark`` (through the API) with the
released-protocol steps added cumulatively and writes, beside the paper's number, one row per metric
(F1, Aff-P, Aff-R, V_PR)::

    column  run (--released-steps)  protocol read                what it adds
    honest  (none)                  test-ratio                   the paper's text, honestly
    a       a                       test-ratio                   one model per entity, MinMax
    b       a b c                   test-ratio                   stride-1 window scores and labels
    c       a b c                   best-f1 (ORACLE)             threshold on the test labels
    d       a b c d                 best-f1 (ORACLE)             range / VUS on 0/1 predictions
    e       a b c d e               best-f1 (ORACLE, LEAK)       test set as validation set

Columns b, c and d come from one run (a b c d): steps c and d change neither the model nor the
scores, only which threshold is the headline (c) and whether range / VUS use the 0/1 predictions
(d). So b is that run's test-ratio protocol and c its best-f1 protocol, with range / VUS from the
continuous scores (the run's ``metrics_on_scores``). Run files made before that field existed
fall back to a separate ``a b c`` run, as the first decompositions did.

    MADCLUSTER_DATA_DIR=../shared/datasets nice python benchmarks/decomposition.py \\
        --dataset MSL --preset default --epochs 2 --stride 20 --threads 1 --seeds 0

Each run's JSON (with its exact ``madcluster benchmark`` command, commit, settings) goes to
``benchmarks/results/decomposition_runs/``; finished tasks are resumed. The rows are merged into
``benchmarks/results/decomposition.json`` (its format: ``madcluster.reporting.decomposition``,
read by ``madcluster report``) and ``decomposition.md`` is regenerated from it.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from madcluster.atomic import atomic_path, atomic_write_text
from madcluster.benchmark.config import BenchmarkConfig
from madcluster.benchmark.runner import run_grid
from madcluster.estimator.detector import MADCluster
from madcluster.evaluation.released_protocol import STEPS
from madcluster.reporting.decomposition import (
    decomposition_row,
    read_decomposition,
    write_decomposition,
)
from madcluster.reporting.figures import decomposition_figure
from madcluster.reporting.paper import PAPER_METRICS, PAPER_TABLE1

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"

COLUMNS: dict[str, tuple[tuple[str, ...], str]] = {
    "honest": ((), "test-ratio"),
    "a": (("a",), "test-ratio"),
    "b": (("a", "b", "c"), "test-ratio"),
    "c": (("a", "b", "c"), "best-f1"),
    "d": (("a", "b", "c", "d"), "best-f1"),
    "e": (("a", "b", "c", "d", "e"), "best-f1"),
}
ABC, ABCD = ("a", "b", "c"), ("a", "b", "c", "d")
METRICS = {"f1": "F1", "aff_precision": "Aff-P", "aff_recall": "Aff-R", "vus_pr": "V_PR"}
# The paper's D-RNN MADCluster is its Table 1 row "DeepSVDD + MADCluster" (DeepSVDD there is the
# distance-only D-RNN; the appendix ablation's MADCluster row has the same F1 / Aff-P / Aff-R).
_PAPER_ROW = {"drnn": "deepsvdd"}
PRESETS = ("default", "paper")


def preset_params(preset: str, embedder: str) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """``(embedder_params, detector_params)`` that turn the library default into ``preset``."""
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; choose one of {', '.join(PRESETS)}")
    chosen = MADCluster.from_preset(preset, embedder=embedder).get_params()
    default = MADCluster(embedder=embedder).get_params()
    changed = {k: v for k, v in chosen.items() if v != default[k]}
    embedder_params = changed.pop("embedder_params", None)
    return embedder_params, changed or None


def paper_value(dataset: str, embedder: str, mode: str, metric: str) -> float | None:
    """The paper's number for this embedder + MADCluster (``mode="full"``) or alone
    (``"base-only"``) on ``dataset``; ``None`` where the paper has none (e.g. the ablation modes)."""
    row = PAPER_TABLE1.get(dataset, {}).get(_PAPER_ROW.get(embedder, embedder))
    column = {"full": 1, "base-only": 0}.get(mode)
    if row is None or column is None or (embedder == "drnn" and mode != "full"):
        return None
    return float(row[column][PAPER_METRICS.index(metric)])


def model_name(embedder: str, mode: str) -> str:
    """The ``model`` field: ``drnn`` (MADCluster on the D-RNN), ``usad + MADCluster``, ``usad``."""
    if embedder == "drnn" and mode == "full":
        return "drnn"
    return {"full": f"{embedder} + MADCluster", "base-only": embedder}.get(mode, f"{embedder} ({mode})")


def run_column_configs(args: argparse.Namespace, out: Path) -> dict[tuple[str, ...], BenchmarkConfig]:
    """One benchmark row per distinct step set of :data:`COLUMNS`."""
    embedder_params, detector_params = preset_params(args.preset, args.embedder)
    configs = {}
    for steps, _ in COLUMNS.values():
        if steps in configs:
            continue
        configs[steps] = BenchmarkConfig(
            dataset=args.dataset,
            embedder=args.embedder,
            mode=args.mode,
            seeds=tuple(args.seeds),
            epochs=args.epochs,
            stride=args.stride,
            threads=args.threads,
            device=args.device,
            embedder_params=embedder_params,
            detector_params=detector_params,
            released_steps=steps,
            tag=f"{args.preset}-e{args.epochs}-s{args.stride}",
            out=str(out),
            verbose=False,
            argv=list(sys.argv),
        )
    return configs


def column_value(results: dict[tuple[str, ...], dict[str, Any]], column: str, metric: str) -> float:
    """One cell: from the column's own run, or columns b / c from the ``a b c d`` run's
    threshold metrics and its range / VUS on the continuous scores."""
    steps, protocol = COLUMNS[column]
    if steps == ABC and ABC not in results:
        run = results[ABCD]
        if metric in run["protocols"][protocol]["metrics"] and metric not in run["metrics_on_scores"]:
            return float(run["protocols"][protocol]["metrics"][metric]["mean"])
        return float(run["metrics_on_scores"][metric]["mean"])
    return float(results[steps]["protocols"][protocol]["metrics"][metric]["mean"])


def decompose(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Run (or resume) every step set and return the decomposition rows of this dataset / preset."""
    out = Path(args.runs)
    configs = run_column_configs(args, out)
    results = {}

    def run(step_sets: list[tuple[str, ...]]) -> None:
        """One grid of every step set: with ``--executor ray`` one Ray start runs all their tasks."""
        for steps in step_sets:
            print(f"[decomposition] {configs[steps].result_name()}: {configs[steps].command()}", flush=True)
        options = {"num_cpus": args.num_cpus} if args.num_cpus else None
        grid = run_grid([configs[s] for s in step_sets], executor=args.executor, progress=False,
                        executor_options=options)
        by_name = {r.name: r for r in grid.results}
        if not grid.ok or any(configs[s].result_name() not in by_name for s in step_sets):
            raise RuntimeError(f"decomposition runs failed: {grid.failures or grid.row_errors}")
        results.update({s: by_name[configs[s].result_name()].to_dict() for s in step_sets})

    run([steps for steps in configs if steps != ABC])
    if "metrics_on_scores" not in results[ABCD]:
        run([ABC])  # an a b c d run from before that field existed
    command = "MADCLUSTER_DATA_DIR=<datasets> python " + shlex.join(
        [str(Path(__file__).resolve().relative_to(HERE.parent)), *args.argv]
    )
    # runs made while others commit to the same checkout span several commits: name the last
    # run's (the code of every step was in place by then), dirty if any run's tree was
    last = _commit(results[max(results, key=len)])
    dirty = any(_commit(r).endswith("+dirty") for r in results.values())
    commit = last if last.endswith("+dirty") or not dirty else last + "+dirty"
    rows = []
    for metric in METRICS:
        values = {column: column_value(results, column, metric) for column in COLUMNS}
        rows.append(
            decomposition_row(
                dataset=results[()]["dataset"],
                model=model_name(args.embedder, args.mode),
                config=args.preset,
                metric=metric,
                values=values,
                paper=paper_value(results[()]["dataset"], args.embedder, args.mode, metric),
                command=command,
                commit=commit,
            )
        )
    return rows


def _commit(result: dict[str, Any]) -> str:
    git = result.get("provenance", {}).get("git", {})
    return (git.get("commit") or "unknown")[:12] + ("+dirty" if git.get("dirty") else "")


def merge_rows(path: Path, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Existing rows of ``path`` with those of the same dataset / model / config / metric replaced."""
    old = read_decomposition(path)
    key = lambda r: (r["dataset"], r["model"], r["config"], r["metric"])
    new = {key(r): r for r in rows}
    merged = [new.pop(key(r), r) for r in old]
    return merged + list(new.values())


def markdown(rows: list[dict[str, Any]], runs: Path) -> str:
    """``decomposition.md``: one table per dataset, the step deltas, and every run's command."""
    head = ["honest", "+a", "+b", "+c ORACLE", "+d", "+e LEAK"]
    lines = [
        "# Evaluation decomposition: honest -> the released code's protocol -> the paper",
        "",
        ("Generated by `benchmarks/decomposition.py` from `decomposition.json` (do not edit). Each "
        "column adds one step of the released code's evaluation to the previous ones "
        "(`madcluster benchmark --released-steps`), so the difference between neighbouring columns "
        "is what that step adds:"),
        "",
        *[f"- **{k}** {s.description}" for k, s in STEPS.items()],
        "",
        ("honest, a and b use the `test-ratio` threshold (the paper's text: the (100 - alpha) "
        "percentile of the test scores, alpha = the known anomaly ratio of the evaluated labels); "
        "c, d and e the `best-f1` threshold chosen on the test labels (**ORACLE**). Column e "
        "trains with the test set as validation set (**LEAK**). Steps c and d change neither the model nor "
        "the scores, so columns b, c and d come from the one `a b c d` run (b and c take range / VUS "
        "from its continuous scores, `metrics_on_scores`); sections made before that field existed "
        "read b and c from a separate `a b c` run, listed below. F1 and Aff-P/R do not change from c to d "
        "(d changes range / VUS only). Values are means over entities from column a on. "
        "`paper` = the paper's Table 1 (D-RNN: its 'DeepSVDD + MADCluster' row). "
        "'gap' = paper - honest; 'steps' = e - honest (what the five steps explain). "
        "These are small CPU-budget runs (epochs, training stride, threads and seeds are in each "
        "command): the models are not trained to convergence, so the absolute numbers are below "
        "what a full run gives; what they measure is how much each evaluation step adds to the "
        "same model's number. The D-RNN 'default configuration' sections use the current default (with the roughness "
        "channels, `roughness_window=3`) where their commit is 8170e7f or later; older ones are "
        "the previous default (`roughness_window=0`). The other embedders' default is unchanged."),
        "",
    ]
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["dataset"], r["model"], r["config"]), []).append(r)
    lines += summary_table(groups)
    lines += [
        ("![Waterfall per dataset and metric: honest, then what each step adds; black: the paper]"
         "(decomposition.png)"),
        "",
        ("`decomposition.png` (written beside this file): per dataset, F1 and V_PR of each section, "
         "honest in grey and then what steps a to e add, hatched where a step lowers the value; the "
         "black line is the paper's number."),
        "",
    ]
    for (dataset, model, config), group in groups.items():
        lines += [
            f"## {dataset}, {model}, {config} configuration",
            "",
            "| metric | " + " | ".join(head) + " | paper | gap | steps |",
            "|---|" + "---|" * (len(head) + 3),
        ]
        for r in group:
            v = r["values"]
            cells = [f"{v[c]:.3f}" for c in COLUMNS]
            paper = r["paper"]
            gap = "-" if paper is None else f"{paper - v['honest']:+.3f}"
            lines.append(
                f"| {METRICS.get(r['metric'], r['metric'])} | " + " | ".join(cells)
                + f" | {'-' if paper is None else f'{paper:.2f}'} | {gap} | {v['e'] - v['honest']:+.3f} |"
            )
        lines += ["", "Step deltas (each column minus the one before it):", ""]
        lines += ["| metric | a | b | c | d | e |", "|---|---|---|---|---|---|"]
        for r in group:
            v = [r["values"][c] for c in COLUMNS]
            deltas = " | ".join(f"{v[i] - v[i - 1]:+.3f}" for i in range(1, len(v)))
            lines.append(f"| {METRICS.get(r['metric'], r['metric'])} | {deltas} |")
        lines += ["", f"Produced by `{group[0]['command']}` at commit {group[0]['commit']}.", ""]
    lines += ["## The benchmark runs behind the columns", ""]
    for path in sorted(runs.glob("*.json")):
        data = json.loads(path.read_text())
        if "released_protocol" not in data:
            continue
        label = (data["released_protocol"] or {}).get("label", "honest")
        lines.append(f"- `{data['name']}` ({label}; commit {_commit(data)}): `{data['command']}`")
    return "\n".join(lines) + "\n"


def gap_explained(values: dict[str, float], paper: float | None) -> str:
    """(e - honest) / (paper - honest) as a percentage; '-' without a paper value, and no ratio
    where the gap is under .02 (a ratio of a near-zero gap says nothing)."""
    if paper is None:
        return "-"
    if paper - values["honest"] < 0.02:
        return f"gap {paper - values['honest']:+.3f}"
    return f"{100 * (values['e'] - values['honest']) / (paper - values['honest']):.0f} %"


def summary_table(groups: dict[tuple[str, str, str], list[dict[str, Any]]]) -> list[str]:
    """One line per section: honest -> all five steps -> paper for F1 and V_PR, and the step that
    adds the most to each (the reader's first question: where does the gap come from?)."""
    lines = [
        "## Summary: how much of the gap to the paper the five steps explain",
        "",
        ("F1 and V_PR honest, after all five steps (e), and the paper's; 'explained' is (e - honest) "
         "/ (paper - honest), the share of the gap to the paper that the five steps account for "
         "(over 100 %: past the paper; under a gap of .02, the gap itself); 'largest step' is the "
         "column that adds the most. Sections "
         "follow below."),
        "",
        ("| dataset | model | config | F1 honest → e (paper) | explained | largest F1 step "
         "| V_PR honest → e (paper) | explained | largest V_PR step |"),
        "|---|---|---|---|---|---|---|---|---|",
    ]
    steps = [c for c in COLUMNS if c != "honest"]
    for (dataset, model, config), group in sorted(groups.items()):
        by_metric = {r["metric"]: r for r in group}
        cells = []
        for metric in ("f1", "vus_pr"):
            r = by_metric.get(metric)
            if r is None:
                cells += ["-", "-", "-"]
                continue
            v = r["values"]
            paper = "-" if r["paper"] is None else f"{r['paper']:.2f}"
            order = ["honest", *steps]
            deltas = {c: v[c] - v[order[i]] for i, c in enumerate(steps)}
            top = max(deltas, key=deltas.get)
            label = STEPS[top].label if top in STEPS else top
            cells += [f"{v['honest']:.3f} → {v['e']:.3f} ({paper})", gap_explained(v, r["paper"]),
                      f"{label} ({deltas[top]:+.3f})"]
        lines.append(f"| {dataset} | {model} | {config} | " + " | ".join(cells) + " |")
    return [*lines, "", *coverage(groups), ""]


BASE_MODELS = ("deepsvdd", "usad", "beatgan", "omnianomaly", "thoc", "anomaly_transformer", "dcdetector")
DATASETS = ("MSL", "SMAP", "SMD")
# Cheapest first (stride-1 scoring cost per window on a CPU, measured here): --missing lists the
# sections in this order, so a queue of them finishes as many as possible early.
_COST_ORDER = ("beatgan", "deepsvdd", "drnn", "usad", "thoc", "omnianomaly", "dcdetector", "anomaly_transformer")


def wanted_sections() -> list[tuple[str, str, str]]:
    """Every ``(dataset, embedder, mode, preset)`` section the issue asks for: the D-RNN default and
    paper configuration, and each base model alone and + MADCluster, on MSL, SMAP and SMD."""
    per_dataset = [("drnn", "full", "default"), ("drnn", "full", "paper")] + [
        (base, mode, "default") for base in BASE_MODELS for mode in ("base-only", "full")
    ]
    return [(dataset, *section) for dataset in DATASETS for section in per_dataset]


def missing_sections(groups: dict[tuple[str, str, str], Any]) -> list[tuple[str, str, str, str]]:
    """The wanted sections with no rows yet, cheapest first."""
    missing = [
        (dataset, embedder, mode, preset)
        for dataset, embedder, mode, preset in wanted_sections()
        if (dataset, model_name(embedder, mode), preset) not in groups
    ]
    return sorted(missing, key=lambda s: (_COST_ORDER.index(s[1]), DATASETS.index(s[0])))


def section_command(dataset: str, embedder: str, mode: str, preset: str, extra: str = "") -> str:
    """The command that adds one section (this script's CPU budget; ``extra`` e.g. ``--device cuda``)."""
    command = (
        f"python benchmarks/decomposition.py --dataset {dataset} --embedder {embedder} --mode {mode} "
        f"--preset {preset} --epochs 2 --stride 20 --seeds 0"
    )
    return f"{command} {extra}".rstrip()


def coverage(groups: dict[tuple[str, str, str], list[dict[str, Any]]]) -> list[str]:
    """Which of the issue's sections are not measured yet, why, and the command adding each."""
    missing = missing_sections(groups)
    if not missing:
        return ["Every section the issue asks for is measured.", ""]
    by_dataset: dict[str, list[str]] = {}
    for dataset, embedder, mode, preset in missing:
        name = model_name(embedder, mode) + (" (paper)" if preset == "paper" else "")
        by_dataset.setdefault(dataset, []).append(name)
    lines = ["Not measured yet:", ""]
    lines += [f"- {dataset}: {', '.join(by_dataset[dataset])}" for dataset in DATASETS if dataset in by_dataset]
    lines += [
        "",
        ("Why: step b scores every stride-1 window with the network (T - L + 1 windows, about L = 100 "
         "times the windows of non-overlapping scoring, ten times those of the default's overlapping "
         "scoring), and steps d and e each need such a run. On this project's 2-core CPU, with "
         "`--threads 1`, a section took: 5-10 minutes for the D-RNN, DeepSVDD and BeatGAN on MSL "
         "(10-20 on SMAP, 10-30 on SMD), 30-45 minutes for THOC and USAD on MSL (about 35 for USAD "
         "and 110 for THOC on SMAP), over two hours "
         "for OmniAnomaly on MSL (10 posterior samples per window; stopped unfinished), and the "
         "Anomaly Transformer and DCdetector would take hours (400-490M MACs per window x 71,056 "
         "stride-1 windows of MSL's 27 channels per run); SMAP and SMD have 6x and 10x MSL's test "
         "points."),
        "",
        ("`python benchmarks/decomposition.py --missing` prints the command of every missing "
         "section, cheapest first (add `--device cuda` on a GPU); finished runs and tasks are resumed, "
         "so the queue can be stopped and restarted:"),
        "",
        "```",
        *[section_command(*section) for section in missing],
        "```",
    ]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", help="MSL, SMAP, SMD, PSM or a folder (required unless --markdown-only)")
    parser.add_argument("--embedder", default="drnn", help="MADCluster's Base Embedder (default: drnn)")
    parser.add_argument(
        "--mode", default="full", help="full (+ MADCluster), base-only (the base model alone), ..."
    )
    parser.add_argument("--preset", default="default", choices=PRESETS, help="MADCluster.from_preset name")
    parser.add_argument("--epochs", type=int, default=2, help="maximum epochs (default: 2, a CPU budget)")
    parser.add_argument("--stride", type=int, default=20, help="training window stride (default: 20)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default: 1)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0], help="seeds (default: 0)")
    parser.add_argument("--device", default="cpu", help="torch device, e.g. cuda (default: cpu)")
    parser.add_argument(
        "--executor",
        default="sequential",
        choices=("sequential", "ray", "auto"),
        help="run a step's tasks (seeds x entities) one by one, or in parallel with Ray "
        "(`madcluster benchmark --executor`; default: sequential)",
    )
    parser.add_argument("--num-cpus", type=int, default=None, help="with --executor ray: CPUs of the local Ray")
    # relative to the working directory, so that the recorded commands hold no machine's paths
    parser.add_argument(
        "--runs", default=os.path.relpath(RESULTS / "decomposition_runs"), help="run JSON folder"
    )
    parser.add_argument(
        "--out", default=os.path.relpath(RESULTS / "decomposition.json"), help="decomposition JSON"
    )
    parser.add_argument("--markdown-only", action="store_true", help="only regenerate the .md from the JSON")
    parser.add_argument(
        "--missing",
        action="store_true",
        help="print the command of every section not measured yet, cheapest first, and exit",
    )
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # the command recorded with the rows
    if args.missing:
        rows = read_decomposition(args.out)
        groups = {(r["dataset"], r["model"], r["config"]): r for r in rows}
        extra = "" if args.device == "cpu" else f"--device {args.device}"
        print("\n".join(section_command(*section, extra) for section in missing_sections(groups)))
        return 0
    if args.dataset is None and not args.markdown_only:
        parser.error("--dataset is required (unless --markdown-only)")
    out = Path(args.out)
    rows = read_decomposition(out) if args.markdown_only else merge_rows(out, decompose(args))
    if not args.markdown_only:
        write_decomposition(out, rows)
    atomic_write_text(out.with_suffix(".md"), markdown(rows, Path(args.runs)))
    figure = decomposition_figure(rows)
    if figure is not None:
        with atomic_path(out.with_suffix(".png")) as tmp:
            figure.savefig(tmp, format="png")
    print(out.with_suffix(".md").read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
