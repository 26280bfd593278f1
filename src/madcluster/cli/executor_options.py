"""The executor flags of every command that runs jobs (``madcluster benchmark``, fleets): argparse
options over :mod:`madcluster.parallel`, so they live with the command line."""

from __future__ import annotations

import argparse
from typing import Any

from madcluster.cli.arg_types import int_in_range
from madcluster.parallel.executors import AUTO, executor_names


def add_executor_arguments(parser: argparse.ArgumentParser, *, what: str = "tasks") -> None:
    """``--executor``, ``--ray-address``, ``--num-cpus``, ``--max-retries``: shared by commands."""
    g = parser.add_argument_group("execution")
    g.add_argument(
        "--executor",
        default=AUTO,
        choices=executor_names(),
        help=f"run the {what} one after another here (sequential) or in parallel on Ray "
        "(ray; pip install 'madcluster[distributed]'); auto = ray when it is installed and there "
        "is more than one (default: auto)",
    )
    g.add_argument(
        "--ray-address",
        default=None,
        help="address of a running Ray cluster (e.g. auto, or ray://head:10001); without it a "
        "local Ray is started with one CPU and one torch thread per task",
    )
    g.add_argument(
        "--num-cpus",
        type=int_in_range(1),
        default=None,
        help="CPUs of the local Ray (default: all)",
    )
    g.add_argument(
        "--max-retries",
        type=int_in_range(0),
        default=3,
        help="Ray: times a task whose worker died is retried (default: 3)",
    )


def executor_options(args: argparse.Namespace) -> dict[str, Any]:
    """Keyword arguments of :func:`~madcluster.parallel.executors.make_executor` from options."""
    options: dict[str, Any] = {"max_retries": getattr(args, "max_retries", 3)}
    if getattr(args, "num_cpus", None) is not None:
        options["num_cpus"] = args.num_cpus
    return options


__all__ = ["add_executor_arguments", "executor_options"]
