"""``madcluster refit MODEL RECENT``: a new normal (after a deploy or a migration) learnt from
recent rows, the network warm-started from the model (:meth:`MADCluster.refit
<madcluster.estimator.detector.MADCluster.refit>`); the model file is replaced (or ``-o``)."""

from __future__ import annotations

import argparse
import time

from madcluster.atomic import check_output_path
from madcluster.cli.arg_types import positive_int
from madcluster.cli.console import say
from madcluster.cli.input_options import add_input_options, read_input
from madcluster.cli.runtime_options import add_runtime_options, apply_runtime
from madcluster.defaults import REFIT_EPOCHS
from madcluster.exceptions import DataError


def add_refit_parser(sub, help_text: str) -> None:
    refit = sub.add_parser(
        "refit",
        help=help_text,
        description="Refit a time-series model on recent, normal rows after its normal changed for "
        "good (a deploy, a migration): the network starts from the model's weights and trains a "
        "few epochs; the input scaling, the score's parts, the warm-up table and the threshold are "
        "fitted anew from the recent rows. The parameters stay the model's. Columns are matched to "
        "the model's by name.",
    )
    refit.add_argument("model", help="model file written by `madcluster fit`")
    refit.add_argument(
        "data",
        help="recent rows (CSV / Parquet / .npy), the model's feature columns, at least one window",
    )
    refit.add_argument(
        "-o",
        "--output",
        default=None,
        help="refitted model file (default: MODEL, replaced atomically)",
    )
    refit.add_argument(
        "--epochs",
        type=positive_int,
        default=REFIT_EPOCHS,
        help=f"epochs of the warm-started network (default: {REFIT_EPOCHS})",
    )
    refit.add_argument(
        "--from-scratch",
        action="store_true",
        help="a fresh network with the model's own epochs instead (a full fit on the recent rows)",
    )
    add_runtime_options(refit, device="cpu")
    add_input_options(refit)
    refit.set_defaults(func=cmd_refit)


def cmd_refit(args: argparse.Namespace) -> int:
    from madcluster.cli.images import is_image_model
    from madcluster.data.columns import feature_values

    output = args.output or args.model
    check_output_path(output, what="model file", not_same_as=[args.data])
    if is_image_model(args.model):
        raise DataError(
            f"{args.model} is an image model: refit takes a time-series model (refit an image "
            "model with fit)"
        )
    table = read_input(args.data, args)  # before torch loads: a bad file says so at once
    from madcluster.estimator.detector import MADCluster

    apply_runtime(args)
    detector = MADCluster.load(args.model, device=args.device)
    detector.set_params(n_jobs=args.threads)
    started = time.perf_counter()
    detector.refit(
        feature_values(table, args.data), epochs=args.epochs, from_scratch=args.from_scratch
    )
    elapsed = time.perf_counter() - started
    detector.save(output)
    how = "from scratch" if args.from_scratch else f"warm-started from {args.model}"
    say(
        f"refitted on {table.values.shape[0]} rows x {table.values.shape[1]} features in "
        f"{elapsed:.1f} s ({len(detector.history_['epoch'])} epochs, {how})"
    )
    say(
        f"threshold (train-{detector.threshold}, contamination={detector.contamination}) = "
        f"{detector.threshold_:.6g}"
    )
    say(f"model written to {output}")
    return 0
