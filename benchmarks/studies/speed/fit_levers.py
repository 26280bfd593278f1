"""Quality per second of the default fit (issue 36 item 1): each lever's configuration fitted once
per series, scored twice: the whole default score and the network's part alone (MADCluster's own
score before the input terms), beside the fit's CPU seconds.

    python benchmarks/studies/speed/fit_levers.py --config '{}' --config '{"epochs": 4}' --jobs 2 \\
        --out benchmarks/results/budget/levers.jsonl
    python benchmarks/studies/speed/fit_levers.py --config '{"epochs": 4}' --series 076_SMD 006_MSL --suite none --out /tmp/x.jsonl
    python benchmarks/studies/speed/fit_levers.py --table benchmarks/results/budget/levers.jsonl   # the markdown table

Series: the TSB-AD subset ``SUBSET`` (12 of the 46, four per source: MSL, SMAP, SMD, long and
short training parts; ``--series`` picks others, ``--series all`` every one) under TSB-AD's
protocol (VUS-PR), and the synthetic suite's three bases (ROC-AUC over every kind; ``--suite none``
skips them). One JSON line per (configuration, series) is appended to ``--out``; a rerun skips the
lines already there. One torch thread per worker, seeds fixed (``--seed``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[3]
PUBLISHED = REPO / "benchmarks" / "results" / "tsbad" / "published_vus_pr.csv"
SUBSET = (
    "076_SMD", "069_SMD", "057_SMD", "066_SMD",
    "170_SMAP", "145_SMAP", "154_SMAP", "163_SMAP",
    "014_MSL", "006_MSL", "005_MSL", "009_MSL",
)
SUITE_BASES = ("sines", "random-walk", "seasonal")


def _init_worker() -> None:
    import torch

    torch.set_num_threads(1)


def _detector(config: dict[str, Any], seed: int):
    from madcluster import MADCluster

    params = {"random_state": seed, **config}  # a configuration's own random_state: training seeds
    preset = params.pop("preset", "default")
    return MADCluster.from_preset(preset, **params)


def _fit_and_score(config: dict[str, Any], seed: int, train: np.ndarray, test: np.ndarray,
                   window: int | None = None) -> tuple[Any, np.ndarray, np.ndarray, float, float]:
    """Fit; the full scores of ``test`` and its network part alone; wall and CPU seconds of the fit."""
    params = dict(config)
    if window is not None:
        params.setdefault("window_size", window)
    detector = _detector(params, seed)
    wall, cpu = time.perf_counter(), time.process_time()
    detector.fit(train)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    full = detector.decision_function(test)
    model = detector.model_
    own = model.own_scores(model.inputs.checked_input(test))
    return detector, full, own, wall, cpu


def run_tsbad(config_name: str, config: dict[str, Any], entity: str, series: Any, seed: int) -> dict[str, Any]:
    from madcluster.evaluation.tsbad import tsbad_vus

    detector, full, own, wall, cpu = _fit_and_score(config, seed, series.train, series.test)
    _, pr = tsbad_vus(full, series.labels, series.test)
    _, pr_own = tsbad_vus(own, series.labels, series.test)
    return {"config": config_name, "series": series.name, "entity": entity, "metric": "vus_pr", "full": pr, "own": pr_own,
            "fit_seconds": wall, "fit_cpu_seconds": cpu, "epochs": len(detector.history_["epoch"])}


def run_suite(config_name: str, config: dict[str, Any], base: str, seed: int) -> dict[str, Any]:
    from madcluster.data.synthetic import make_anomaly_suite, roc_auc_by_kind

    data = make_anomaly_suite(base, seed=seed)
    detector, full, own, wall, cpu = _fit_and_score(config, seed, data.train, data.test, window=100)
    auc = roc_auc_by_kind(full, data.kinds, data.kind_names)["all"]
    auc_own = roc_auc_by_kind(own, data.kinds, data.kind_names)["all"]
    return {"config": config_name, "series": f"suite/{base}", "entity": base, "metric": "roc_auc", "full": auc, "own": auc_own,
            "fit_seconds": wall, "fit_cpu_seconds": cpu, "epochs": len(detector.history_["epoch"])}


def table(path: Path) -> str:
    """Markdown: per configuration (means over its seeds, a ``random_state`` in it), the TSB-AD subset's mean VUS-PR (the whole score and the network
    part alone) over the series the default ``{}`` also has, and the difference to it; the suite's
    ROC-AUC per base and mean; the mean fit CPU seconds."""
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    by: dict[str, dict[str, dict]] = {}
    seeds: dict[str, set] = {}
    runs: dict[tuple[str, str], list[dict]] = {}
    for row in rows:  # a configuration's random_state is a seed of it: means over the seeds
        config = json.loads(row["config"])
        seed = config.pop("random_state", None)
        name = json.dumps(config, sort_keys=True)
        seeds.setdefault(name, set()).add(seed)
        runs.setdefault((name, row["series"]), []).append(row)
    for (name, series), group in runs.items():
        by.setdefault(name, {})[series] = {
            **group[0], **{k: float(np.mean([r[k] for r in group])) for k in ("full", "own", "fit_cpu_seconds")}
        }
    reference = by.get("{}", {})
    lines = ["| configuration | seeds | TSB-AD series | VUS-PR | network part | vs default (same series) | suite: random walk | seasonal | sines | mean | fit CPU s (mean) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, results in by.items():
        series = [s for s in results if not s.startswith("suite/")]
        same = [s for s in series if s in reference]
        suite = {s.split("/", 1)[1]: results[s]["full"] for s in results if s.startswith("suite/")}
        cells = [f"`{name}`", str(len(seeds[name])), str(len(series))]
        cells += [f"{np.mean([results[s][k] for s in series]):.3f}" if series else "" for k in ("full", "own")]
        cells.append(f"{np.mean([results[s]['full'] - reference[s]['full'] for s in same]):+.3f} ({len(same)})" if same and name != "{}" else "")
        cells += [f"{suite[b]:.3f}" if b in suite else "" for b in ("random-walk", "seasonal", "sines")]
        cells.append(f"{np.mean(list(suite.values())):.3f}" if len(suite) == len(SUITE_BASES) else "")
        cells.append(f"{np.mean([r['fit_cpu_seconds'] for r in results.values()]):.1f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--table", type=Path, help="print the markdown table of a results file and stop")
    parser.add_argument("--config", action="append", help="a JSON object of MADCluster parameters")
    parser.add_argument("--series", nargs="*", default=list(SUBSET), help="TSB-AD file stem prefixes, 'all', or none")
    parser.add_argument("--suite", nargs="*", default=list(SUITE_BASES), help="suite bases, or 'none'")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", default=os.environ.get("MADCLUSTER_DATA_DIR"))
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if args.table:
        print(table(args.table))
        return
    if not args.config or args.out is None:
        parser.error("--config and --out are needed (or --table)")

    from madcluster.data.tsbad_rebuild import read_published_table, rebuild_series

    configs = {json.dumps(json.loads(c), sort_keys=True): json.loads(c) for c in args.config}
    done = set()
    if args.out.exists():
        for line in args.out.read_text().splitlines():
            row = json.loads(line)
            done.add((row["config"], row["series"]))
    found = []
    if args.series and args.series != ["none"]:
        rebuilt, _ = rebuild_series(read_published_table(PUBLISHED), args.data_dir)
        found = [(r.entity, r.data) for r in rebuilt
                 if args.series == ["all"] or any(r.data.name.startswith(s) for s in args.series)]
    bases = [] if args.suite == ["none"] else args.suite
    tasks = []
    for name, config in configs.items():
        tasks += [(run_tsbad, (name, config, entity, data, args.seed)) for entity, data in found if (name, data.name) not in done]
        tasks += [(run_suite, (name, config, base, args.seed)) for base in bases if (name, f"suite/{base}") not in done]
    print(f"{len(tasks)} fits", file=sys.stderr, flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with ProcessPoolExecutor(args.jobs, mp_context=get_context("spawn"), initializer=_init_worker) as pool:
        futures = [pool.submit(fn, *fn_args) for fn, fn_args in tasks]
        for future in as_completed(futures):
            row = future.result()
            with args.out.open("a") as f:
                f.write(json.dumps(row) + "\n")
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
