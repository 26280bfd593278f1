"""``madcluster benchmark``: the rows its options describe, and the command itself (the options:
:mod:`madcluster.cli.benchmark_options`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from madcluster.benchmark.config import BenchmarkConfig, parse_key_values
from madcluster.benchmark.grid import expand_grid, load_grid_file
from madcluster.benchmark.report import format_summary
from madcluster.benchmark.runner import run_grid
from madcluster.cli.benchmark_options import FIELD_OPTIONS
from madcluster.cli.executor_options import executor_options
from madcluster.cli.image_benchmark import (
    IMAGE_SHARED_OPTIONS,
    run_image_benchmark_command,
)
from madcluster.exceptions import ParameterError


def configs_from_args(args: argparse.Namespace) -> list[BenchmarkConfig]:
    """The rows described by parsed ``madcluster benchmark`` arguments (and ``--grid``)."""
    spec: dict[str, Any] = {}
    if getattr(args, "grid", None):
        spec = load_grid_file(args.grid)
    for _, flag, _ in FIELD_OPTIONS:
        dest = flag[2:].replace("-", "_")
        value = getattr(args, dest, None)
        if value is None:
            continue
        if dest in ("embedder_param", "detector_param"):
            spec[dest + "s"] = {**(spec.get(dest + "s") or {}), **parse_key_values(value)}
        elif dest in ("entities", "seeds", "released_steps"):
            spec[dest] = list(value)
        else:
            spec[dest] = value
    if getattr(args, "per_entity", None):
        spec["per_entity"] = True
    if str(spec.get("out", "")).lower() == "none":
        spec["out"] = None
    if getattr(args, "quiet", False):
        spec["verbose"] = False
    spec["argv"] = list(sys.argv)
    if "dataset" not in spec and not spec.get("rows"):
        raise ValueError(
            "name a dataset with --dataset, a grid file with --grid, or an image set with --images"
        )
    return expand_grid(spec)


def refuse_time_series_options(args: argparse.Namespace) -> None:
    """With ``--images``, a time-series option given is an error that names it (never ignored)."""
    dests = [flag[2:].replace("-", "_") for _, flag, _ in FIELD_OPTIONS]
    given = [
        f"--{d.replace('_', '-')}"
        for d in [*dests, "grid", "per_entity"]
        if d not in IMAGE_SHARED_OPTIONS and getattr(args, d, None) not in (None, False)
    ]
    if given:
        raise ParameterError(f"{', '.join(given)} do(es) not apply to the image table (--images)")


def run_benchmark_command(args: argparse.Namespace) -> int:
    """``madcluster benchmark``: run the grid, write the results, print each row's summary
    (with ``--images``: the image table instead)."""
    if getattr(args, "images", None) is not None:
        refuse_time_series_options(args)
        return run_image_benchmark_command(args)
    configs = configs_from_args(args)
    grid = run_grid(
        configs,
        executor=getattr(args, "executor", "auto"),
        ray_address=getattr(args, "ray_address", None),
        resume=getattr(args, "resume", True),
        executor_options=executor_options(args),
    )
    for result in grid.results:
        print(format_summary(result.to_dict()))
        if result.path is not None:
            print(
                f"results written to {result.path} (and {Path(result.path).parent / 'results.md'})"
            )
        print()
    n_failed = len(grid.failures)
    print(
        f"{grid.n_tasks} tasks in {len(configs)} row(s): {grid.n_run - n_failed} run, "
        f"{grid.n_resumed} resumed (finished before), {n_failed} failed "
        f"[{grid.executor.get('executor')}]"
    )
    for failure in grid.failures:
        print(f"  FAILED {failure['row']}/{failure['key']}: {failure['error']}", file=sys.stderr)
    for name, why in grid.row_errors.items():
        print(f"  no result for {name}: {why}", file=sys.stderr)
    if not grid.ok:
        print(
            "rerun the same command to retry what failed; finished tasks are kept", file=sys.stderr
        )
        return 1
    return 0


__all__ = ["configs_from_args", "run_benchmark_command"]
