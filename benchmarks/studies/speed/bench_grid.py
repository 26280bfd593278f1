"""Wall time of one benchmark grid run sequentially and on a local Ray, in one process.

    python benchmarks/studies/speed/bench_grid.py                          # MSL, D-RNN, 2 modes x 2 seeds
    python benchmarks/studies/speed/bench_grid.py --per-entity --modes full --seeds 0 --epochs 10 --stride 10

Both runs start from empty result folders (no resume), use one torch thread per task, and must
give identical metrics (checked). The Ray time includes starting the local Ray and its workers;
with ``--warm-cluster`` a local Ray cluster is started first (``ray start --head``, not timed, as a
user with a running cluster or repeated grids has it) and the grid joins it with ``--ray-address``.

    python benchmarks/studies/speed/bench_grid.py --per-entity --modes full --seeds 0 --epochs 10 --stride 10 --warm-cluster
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from madcluster.benchmark.grid import expand_grid
from madcluster.benchmark.runner import run_grid


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="MSL")
    parser.add_argument("--embedder", default="drnn")
    parser.add_argument("--modes", nargs="+", default=["full", "distance-only"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--stride", type=int, default=50)
    parser.add_argument("--per-entity", action="store_true")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="local Ray CPUs")
    parser.add_argument("--json", default=None, help="also write the timings here")
    parser.add_argument("--warm-cluster", action="store_true",
                        help="start a local Ray cluster before timing and join it (ray start --head)")
    args = parser.parse_args()
    if args.warm_cluster:
        ray_cli = str(Path(sys.executable).with_name("ray"))
        subprocess.run([ray_cli, "start", "--head", f"--num-cpus={args.workers}",
                        "--include-dashboard=false", "--disable-usage-stats"],
                       check=True, capture_output=True)
    try:
        _race(args)
    finally:
        if args.warm_cluster:
            subprocess.run([ray_cli, "stop", "--force"], check=False, capture_output=True)


def _race(args: argparse.Namespace) -> None:

    timings: dict[str, float] = {}
    task_seconds: dict[str, float] = {}
    metrics: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for executor in ("sequential", "ray"):
            spec = {
                "dataset": args.dataset,
                "embedder": args.embedder,
                "mode": args.modes,
                "seeds": args.seeds,
                "epochs": args.epochs,
                "stride": args.stride,
                "per_entity": args.per_entity,
                "threads": 1,
                "verbose": False,
                "out": str(Path(tmp) / executor),
            }
            configs = expand_grid(spec)
            started = time.perf_counter()
            grid = run_grid(
                configs,
                executor=executor,
                progress=True,
                ray_address="auto" if executor == "ray" and args.warm_cluster else None,
                executor_options=(
                    {"num_cpus": args.workers} if executor == "ray" and not args.warm_cluster else None
                ),
            )
            timings[executor] = time.perf_counter() - started
            if not grid.ok:
                raise SystemExit(f"{executor}: failures {grid.failures} {grid.row_errors}")
            metrics[executor] = {r.name: r.to_dict()["protocols"] for r in grid.results}
            busy = sum(
                run["train_seconds"] + run["score_seconds"] for r in grid.results for run in r.runs
            )
            task_seconds[executor] = busy
            print(
                f"{executor}: {grid.n_tasks} tasks in {timings[executor]:.1f} s wall "
                f"(fit + score inside the tasks: {busy:.1f} s in all)"
            )

    same = metrics["sequential"] == metrics["ray"]
    ratio = timings["sequential"] / timings["ray"]
    print(
        f"sequential {timings['sequential']:.1f} s, ray ({args.workers} CPUs) "
        f"{timings['ray']:.1f} s: speed-up {ratio:.2f}x; identical metrics: {same}"
    )
    if args.json:
        record = {
            "args": vars(args),
            "seconds": timings,
            "task_seconds": task_seconds,
            "speedup": ratio,
            "identical": same,
            "load_average_after": os.getloadavg(),
        }
        Path(args.json).write_text(json.dumps(record, indent=1) + "\n")
    if not same:
        raise SystemExit("metrics differ between executors")


if __name__ == "__main__":
    main()
