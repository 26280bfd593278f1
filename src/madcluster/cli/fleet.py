"""``madcluster fit`` / ``score`` on a folder of entity files (:mod:`madcluster.fleet`).

Says per entity what single-file commands say: epoch lines when stderr is not a terminal (the
entity bar shows on a terminal), and with ``--label-column`` each entity's metrics plus their mean.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from madcluster.cli.console import epoch_lines
from madcluster.cli.executor_options import add_executor_arguments, executor_options
from madcluster.cli.input_options import read_options

#: Metrics printed per entity and as a mean over the entities.
SHOWN_METRICS = ("auc_roc", "vus_pr", "f1")


def add_fleet_arguments(parser: Any) -> None:
    """Options of ``madcluster fit`` / ``score`` for a folder of entity files."""
    add_executor_arguments(parser, what="entities (when DATA is a folder)")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="go on where an interrupted run stopped: `fit` of one file continues from "
        "OUTPUT.partial, the training state Ctrl-C saved (same data and options; --epochs may "
        "change); a folder of entities skips those whose output file already exists",
    )


def fit_fleet_command(args: argparse.Namespace, params: Mapping[str, Any]) -> int:
    """``madcluster fit FOLDER -o MODELS``: the detector ``params`` describe, for every entity."""
    from madcluster.fleet import fit_fleet

    def on_entity(entity: str, details: dict[str, Any]) -> None:
        if getattr(args, "quiet", False) or sys.stderr.isatty():
            return
        for line in epoch_lines(details.get("history") or {}):
            print(f"{entity}: {line}", file=sys.stderr, flush=True)

    result = fit_fleet(
        args.data,
        args.output,
        params=params,
        read_options=read_options(args),
        threads=getattr(args, "threads", None),
        resume=getattr(args, "resume", False),
        progress=not getattr(args, "quiet", False),
        on_entity=on_entity,
        **_executor_args(args),
    )
    return _report(result, "model", args.output)


def score_fleet_command(args: argparse.Namespace) -> int:
    """``madcluster score MODELS FOLDER [-o SCORES]``: one scores CSV (+ PNG) per entity."""
    from madcluster.fleet import score_fleet

    quiet = getattr(args, "quiet", False)

    def on_entity(entity: str, details: dict[str, Any]) -> None:
        if not quiet and not sys.stderr.isatty():
            print(
                f"{entity}: scored {details.get('n_rows')} rows, {details.get('n_above')} above "
                f"threshold {details.get('threshold', float('nan')):.6g}",
                file=sys.stderr,
                flush=True,
            )

    result = score_fleet(
        args.model,
        args.data,
        args.output,
        threshold=args.threshold,
        read_options=read_options(args),
        device=getattr(args, "device", "cpu"),
        threads=getattr(args, "threads", None),
        progress=not quiet,
        explain=not getattr(args, "no_explain", False),
        plot=getattr(args, "plot", None) != "none",
        on_entity=on_entity,
        **_executor_args(args),
    )
    out = args.output or str(Path(str(args.data)).resolve()) + ".scores"
    status = _report(result, "scores file", out)
    _print_fleet_metrics(result.details, labelled=getattr(args, "label_column", None) is not None)
    return status


def _print_fleet_metrics(details: Mapping[str, dict[str, Any]], *, labelled: bool) -> None:
    """Each entity's metrics and their mean, as ``madcluster score --label-column`` prints them."""
    rows = {entity: d["metrics"] for entity, d in details.items() if d.get("metrics")}
    if not labelled:
        return
    if not rows:
        print("labels are all one class in every entity: metrics skipped")
        return
    print(
        "metrics per entity (no point adjustment; range/VUS metrics on continuous scores, window "
        "100):"
    )
    width = max(len(e) for e in rows)
    print("  " + "entity".ljust(width) + "".join(f"  {k:>8}" for k in SHOWN_METRICS))
    for entity, metrics in rows.items():
        print(
            "  "
            + entity.ljust(width)
            + "".join(f"  {metrics.get(k, float('nan')):8.4f}" for k in SHOWN_METRICS)
        )
    means = {k: float(np.mean([m[k] for m in rows.values() if k in m])) for k in SHOWN_METRICS}
    print(
        "  "
        + f"mean of {len(rows)}".ljust(width)
        + "".join(f"  {means[k]:8.4f}" for k in SHOWN_METRICS)
    )


def _executor_args(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "executor": getattr(args, "executor", "auto"),
        "ray_address": getattr(args, "ray_address", None),
        "executor_options": executor_options(args),
    }


def _report(result: Any, what: str, out: Any) -> int:
    written = len(result.outputs) - len(result.skipped)
    print(
        f"{len(result.outputs)} entities with a {what} in {out} ({written} written, "
        f"{len(result.skipped)} kept from before), {len(result.failures)} failed "
        f"[{result.executor.get('executor')}]"
    )
    for entity, error in result.failures.items():
        print(f"  FAILED {entity}: {error}", file=sys.stderr)
    return 0 if result.ok else 1
