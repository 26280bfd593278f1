"""Evaluate detector configurations on TSB-AD's 46 MSL / SMAP / SMD series under its protocol.

Each configuration is fitted on each series' first N points (N from the TSB-AD file name), scores
the whole series, and gets TSB-AD 1.5's VUS-PR / VUS-ROC with its window rule
(:mod:`madcluster.evaluation.tsbad`). The series are rebuilt in memory from the benchmark arrays
(``--data-dir``, else ``$MADCLUSTER_DATA_DIR``, else ``../shared/datasets``) and TSB-AD's published
table (``benchmarks/results/tsbad/published_vus_pr.csv``), or read from a folder of TSB-AD CSV files
(``--tsbad-dir``, e.g. written by ``benchmarks/tables/tsbad_rebuild.py``). Seeds are fixed (``--seed``,
default 0, passed as ``random_state``); every worker runs one torch thread.

    python benchmarks/tsbad.py --config default --config paper --jobs 2 \\
        --out benchmarks/results/tsbad/madcluster.json
    python benchmarks/tsbad.py --config benchmarks/studies/archive/score/tsbad_candidates.json --jobs 16 \\
        --data-dir /path/to/datasets --out /tmp/candidates.json
    python benchmarks/tsbad.py --config '{"roughness_window": 5}' --series 002_MSL 144_SMAP --jobs 1

A ``--config`` is a preset name (``default``, ``paper``), a JSON object of ``MADCluster`` keyword
arguments (``"preset"`` picks the base preset; ``"detector": "pca" | "kmeans"`` picks a window
baseline), or a JSON file holding one such object or an object of named ones (e.g.
``benchmarks/studies/archive/score/tsbad_candidates.json``; keys starting with ``_`` are comments). Results are written
after every finished series (JSON + a markdown table beside it); rerunning with the same ``--out``
skips the (configuration, series) pairs already there, so an interrupted grid resumes.
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
from benchlib import add_series_arguments, load_series, stamp

DATASETS = ("MSL", "SMAP", "SMD")


def parse_configs(values: list[str]) -> dict[str, dict[str, Any]]:
    """``--config`` values -> {name: params}."""
    from madcluster.presets import PRESETS

    configs: dict[str, dict[str, Any]] = {}
    for value in values:
        if value in PRESETS:
            configs[value] = {"preset": value}
        elif value.lstrip().startswith("{"):
            configs[value.replace(" ", "")] = json.loads(value)
        elif Path(value).is_file():
            loaded = json.loads(Path(value).read_text())
            named = {k: v for k, v in loaded.items() if not k.startswith("_")}
            if all(isinstance(v, dict) for v in named.values()):
                configs.update(named)
            else:
                configs[Path(value).stem] = named
        else:
            sys.exit(f"--config {value!r} is neither a preset ({', '.join(PRESETS)}), a JSON object "
                     "nor an existing JSON file")
    return configs


def _init_worker() -> None:
    import torch

    torch.set_num_threads(1)


def _run_one(name: str, config: dict[str, Any], series: Any, seed: int) -> tuple[str, dict[str, Any]]:
    from madcluster.evaluation.tsbad import evaluate_series

    return name, evaluate_series(config, series, seed).as_dict()


def summarise(rows: list[dict[str, Any]], configs: list[str]) -> dict[str, dict[str, float]]:
    """Mean VUS-PR per configuration and source dataset (and over all series)."""
    out: dict[str, dict[str, float]] = {}
    for name in configs:
        mine = [r for r in rows if r["config"] == name]
        out[name] = {d: float(np.mean([r["vus_pr"] for r in mine if r["dataset"] == d]))
                     for d in DATASETS if any(r["dataset"] == d for r in mine)}
        if mine:
            out[name]["all"] = float(np.mean([r["vus_pr"] for r in mine]))
            out[name]["n"] = len(mine)
            out[name]["fit_seconds"] = float(np.sum([r["fit_seconds"] for r in mine]))
    return out


def markdown(record: dict[str, Any]) -> str:
    summary = record["summary"]
    lines = [
        "# TSB-AD protocol: mean VUS-PR per source dataset", "",
        f"Command: `{record['provenance']['command']}`", "",
        "| configuration | MSL | SMAP | SMD | all | series | fit s (sum) |", "|---|---|---|---|---|---|---|",
    ]
    for name, s in summary.items():
        cells = [f"{s[d]:.3f}" if d in s else "" for d in (*DATASETS, "all")]
        lines.append(f"| `{name}` | {' | '.join(cells)} | {s.get('n', 0)} | {s.get('fit_seconds', 0):.0f} |")
    lines += ["", "Per series (VUS-PR):", "",
              "| series | entity | " + " | ".join(f"`{c}`" for c in summary) + " |",
              "|---|---|" + "---|" * len(summary)]
    by_series: dict[str, dict[str, float]] = {}
    entity: dict[str, str] = {}
    for r in record["results"]:
        by_series.setdefault(r["series"], {})[r["config"]] = r["vus_pr"]
        entity[r["series"]] = r["entity"]
    for series in sorted(by_series):
        cells = [f"{by_series[series][c]:.3f}" if c in by_series[series] else "" for c in summary]
        lines.append(f"| {series} | {entity[series]} | {' | '.join(cells)} |")
    return "\n".join(lines) + "\n"


def write(record: dict[str, Any], out: Path) -> None:
    from madcluster.atomic import atomic_write_text

    record["summary"] = summarise(record["results"], list(record["configs"]))
    atomic_write_text(out, json.dumps(record, indent=1) + "\n")
    atomic_write_text(out.with_suffix(".md"), markdown(record))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", action="append", required=True,
                        help="preset name, JSON object or JSON file (repeatable)")
    add_series_arguments(parser)
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (one torch thread each)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, type=Path, help="results JSON (a .md is written beside it)")
    args = parser.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")

    from madcluster.benchmark.provenance import provenance

    configs = parse_configs(args.config)
    series = load_series(args)
    record: dict[str, Any] = {"protocol": "tsb-ad", "seed": args.seed, "configs": configs, "results": []}
    today = stamp(configs)["measured"]
    if args.out.is_file():
        previous = json.loads(args.out.read_text())
        # a result is kept only if it measured what the configuration resolves to today (a preset's
        # name alone is not enough: the default's parameters change between commits)
        measured = previous.get("stamp", {}).get("measured", {})
        record["results"] = [r for r in previous.get("results", [])
                             if r["config"] in configs and previous["configs"].get(r["config"]) == configs[r["config"]]
                             and previous.get("seed") == args.seed and measured.get(r["config"]) == today[r["config"]]]
    done = {(r["config"], r["series"]) for r in record["results"]}
    command = "python benchmarks/tsbad.py " + " ".join(
        a if a.replace("-", "").replace("_", "").replace("/", "").replace(".", "").isalnum() else repr(a)
        for a in (argv if argv is not None else sys.argv[1:]))
    record["provenance"] = provenance(command, argv if argv is not None else sys.argv[1:], jobs=args.jobs)
    # the code of this run; results kept from an earlier run of the same file are counted apart
    record["stamp"] = {**stamp(configs), "results_from_an_earlier_run": len(record["results"])}
    meta = {s.name: (d, e) for d, e, s in series}
    # longest series first, so the pool does not wait on one SMD series at the end
    tasks = sorted(((name, cfg, s) for name, cfg in configs.items() for _, _, s in series
                    if (name, s.name) not in done), key=lambda t: -len(t[2].test))
    print(f"{len(tasks)} runs ({len(done)} already in {args.out}), {args.jobs} job(s)", flush=True)
    started = time.perf_counter()

    def collect(name: str, result: dict[str, Any]) -> None:
        dataset, entity = meta[result["series"]]
        record["results"].append({"config": name, "dataset": dataset, "entity": entity, **result})
        write(record, args.out)
        print(f"[{time.perf_counter() - started:7.0f}s] {name} {result['series']} VUS-PR "
              f"{result['vus_pr']:.3f} ({result['fit_seconds']:.0f}s fit)", flush=True)

    if args.jobs <= 1:
        _init_worker()
        for name, cfg, s in tasks:
            collect(*_run_one(name, cfg, s, args.seed))
    else:
        with ProcessPoolExecutor(args.jobs, mp_context=get_context("spawn"), initializer=_init_worker) as pool:
            futures = [pool.submit(_run_one, name, cfg, s, args.seed) for name, cfg, s in tasks]
            for future in as_completed(futures):
                collect(*future.result())
    write(record, args.out)
    for name, s in record["summary"].items():
        print(name, {k: round(v, 3) for k, v in s.items()})


if __name__ == "__main__":
    main()
