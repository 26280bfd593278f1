"""The ``madcluster`` command line: a thin layer over the Python API.

    madcluster demo                       train and evaluate on the embedded demo series
    madcluster fit DATA -o model.mcz      train on a CSV / Parquet / .npy file
    madcluster score model.mcz DATA       scores CSV (+ PNG plot)
    madcluster refit model.mcz RECENT     a new normal: refit on recent rows, warm-started
    madcluster fit bottle/ --embedder rd4ad -o m.mcz
                                          images: an MVTec class folder (its train/good)
    madcluster score m.mcz bottle/test/crack --maps maps/
                                          one score per image, anomaly-map PNGs
    madcluster benchmark --dataset MSL    paper metrics on a benchmark dataset
    madcluster benchmark --images generated   the paper's image tables (or --images MVTEC_ROOT)
    madcluster report RESULTS_DIR -o report.html   one HTML page (or .md) from result JSONs

Errors in the input end with a one-line message and exit status 2, never a traceback; output
paths, ``--device`` and ``--threshold`` are checked before any training or writing starts.
"""

from __future__ import annotations

import argparse
import logging
import sys
import warnings
from collections.abc import Collection, Sequence

from madcluster import __version__
from madcluster.cli.arg_types import finite_float, float_in_range
from madcluster.cli.commands import cmd_benchmark, cmd_fit, cmd_score
from madcluster.cli.console import OneLineErrorParser, show_warning, stdout_gone
from madcluster.cli.demo import cmd_demo
from madcluster.cli.deploy import add_deploy_parsers
from madcluster.cli.fleet import add_fleet_arguments
from madcluster.cli.images import add_image_arguments
from madcluster.cli.input_options import add_input_options
from madcluster.cli.options import (
    CLI_SETTINGS,
    DEFAULT_EPILOG,
    SettingsHelpFormatter,
    add_training_options,
)
from madcluster.cli.report import add_report_parser
from madcluster.cli.runtime_options import add_runtime_options
from madcluster.exceptions import MADClusterError

#: Each command's one-line help, shown by ``madcluster --help`` without building its options.
COMMAND_HELP = {
    "demo": "train and evaluate on the embedded demo series (no download, CPU, < 1 min)",
    "fit": "train a detector on a CSV / Parquet / .npy file",
    "score": "score a file with a trained model: scores CSV and PNG plot",
    "benchmark": "train, score and evaluate on MSL / SMAP / SMD / PSM with every threshold "
    "protocol; --images: the paper's image tables (MVTec AD or a generated set)",
    "report": "one self-contained HTML page (or Markdown) from benchmark result JSONs",
    "refit": "refit a model on recent rows (a new normal), warm-started from it",
    "serve": "HTTP scoring service (batch, per-series streams, health, Prometheus metrics)",
    "export": "export a model to ONNX (a window batch in, per-step scores out)",
}


def build_parser(commands: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The ``madcluster`` parser; only the ``commands`` named get their options (None: all).

    ``main`` builds just the command on its command line, so ``madcluster --help`` and
    ``madcluster fit --bad-flag`` answer without importing torch (or the benchmark machinery).
    """
    parser = OneLineErrorParser(
        prog="madcluster",
        description="MADCluster: unsupervised multivariate time-series anomaly detection "
        "(train on normal data, score new data).",
        epilog=DEFAULT_EPILOG,
    )
    parser.add_argument("--version", action="version", version=f"madcluster {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    builders = {
        "demo": _add_demo_parser,
        "fit": _add_fit_parser,
        "score": _add_score_parser,
        "benchmark": _add_benchmark_parser,
        "report": _add_report_parser,
        "refit": _add_refit_parser,
    }
    for name, add in builders.items():
        if commands is None or name in commands:
            add(sub)
        else:
            sub.add_parser(name, help=COMMAND_HELP[name])
    if commands is None or {"serve", "export"} & set(commands):
        add_deploy_parsers(sub)  # serve and export
    else:
        for name in ("serve", "export"):
            sub.add_parser(name, help=COMMAND_HELP[name])
    return parser


def _add_refit_parser(sub) -> None:
    from madcluster.cli.refit import add_refit_parser

    add_refit_parser(sub, COMMAND_HELP["refit"])


def _add_demo_parser(sub) -> None:
    demo = sub.add_parser(
        "demo",
        formatter_class=SettingsHelpFormatter,
        help=COMMAND_HELP["demo"],
        description="Train MADCluster on a built-in synthetic series with injected anomalies, "
        "then print metrics and write plots.",
    )
    demo.add_argument(
        "--output-dir",
        default="madcluster-demo",
        help="where plots, model and metrics go (default: ./madcluster-demo)",
    )
    demo.add_argument(
        "--quiet",
        action="store_true",
        help="no progress bars, epoch lines or notes (results still print)",
    )
    # Demo settings (lr 3e-3, rho 0.1, stride 5) were picked on the demo series itself; see
    # docs/results.md.
    demo_settings = {**CLI_SETTINGS, "epochs": 10, "stride": 5, "lr": 3e-3, "rho": 0.1}
    add_training_options(demo, demo_settings)
    demo.set_defaults(func=cmd_demo)


def _add_fit_parser(sub) -> None:
    fit = sub.add_parser(
        "fit",
        formatter_class=SettingsHelpFormatter,
        help=COMMAND_HELP["fit"],
        description="Train on (mostly normal) data. Features are standardised with training "
        "statistics; the last 20% of the series (--validation-size) is the validation split for "
        "early stopping. "
        "A time estimate prints after the first batches; then progress bars on a terminal, or one "
        "line per epoch with the time left when stderr is redirected. Ctrl-C (or SIGTERM: timeout, "
        "systemd, docker stop) saves the training state to OUTPUT.partial; --resume goes on from "
        "it. After the last epoch, while the model is finished (seconds), a first one lets it "
        "finish and be written; a second stops at once.",
    )
    fit.add_argument(
        "data",
        help="training file: .csv, .parquet or .npy (rows = time steps, columns = features); "
        "or a folder of such files, one entity each: one model per file, written to the folder -o",
    )
    fit.add_argument(
        "-o", "--output", required=True, help="model file to write (zip of JSON config + weights)"
    )
    fit.add_argument(
        "--history-plot",
        default=None,
        help="also write the training curves (nu, R, distance, loss) to this PNG",
    )
    fit.add_argument(
        "--quiet",
        action="store_true",
        help="no progress bars, epoch lines or notes (results still print)",
    )
    fit.add_argument(
        "--all-rows",
        action="store_true",
        help="a TSB-AD file (NAME_tr_N_1st_F.csv) trains on its first N rows, as TSB-AD's "
        "protocol; this trains on every row instead",
    )
    add_input_options(fit)
    add_training_options(fit, CLI_SETTINGS)
    add_fleet_arguments(fit)
    add_image_arguments(fit)
    fit.set_defaults(func=cmd_fit)


def _add_score_parser(sub) -> None:
    score = sub.add_parser(
        "score",
        help=COMMAND_HELP["score"],
        description="Write one anomaly score per row (higher = more anomalous) and 0/1 predictions "
        "from the model's threshold; with --label-column also print metrics. The CSV has row, the "
        "input's timestamp column (if any), score, is_anomaly, top_channels (on rows above the "
        "threshold: the up to 3 channels contributing most to the score, ';'-separated, from "
        "MADCluster.explain) and label (if given). Columns are matched to the model's by name "
        "(reordered if needed).",
    )
    score.add_argument(
        "model",
        help="model file written by `madcluster fit`, or a .onnx file from `madcluster export` "
        "(scored with onnxruntime and numpy, no torch; no top_channels column)",
    )
    score.add_argument(
        "data",
        help="file to score, same feature columns as at fit time; or a folder of files, one "
        "entity each (MODEL is then a folder of <entity>.mcz or one model for all): one scores "
        "CSV per entity in -o (default: DATA.scores/)",
    )
    score.add_argument(
        "-o",
        "--output",
        default=None,
        help="scores CSV (default: DATA.scores.csv; for an image folder, "
        "<last three folder names>.scores.csv in the current folder, outside the dataset)",
    )
    score.add_argument(
        "--plot", default=None, help="PNG plot path (default: next to the CSV; 'none' to skip)"
    )
    score.add_argument(
        "--figures",
        default=None,
        metavar="DIR",
        help="also write the paper's figures for this model to DIR: embedding.png (h of the "
        "scored steps and the center's path over the epochs, UMAP if installed else PCA) and "
        "distance_bands.png (||h - c|| with mean ± 1/2/3 sigma bands; labelled spans shaded)",
    )
    score.add_argument(
        "--threshold",
        type=finite_float,
        default=None,
        help="override the model's threshold (a finite number)",
    )
    score.add_argument(
        "--quiet", action="store_true", help="no notes on stderr (results still print)"
    )
    score.add_argument(
        "--no-explain",
        action="store_true",
        help="skip the per-channel attribution (the CSV's top_channels column and the plot's "
        "channel choice); it scores the spans around the rows above the threshold once more per "
        "channel",
    )
    score.add_argument(
        "--incidents",
        default=None,
        metavar="PATH",
        help="also write the incidents a stream of these rows would raise as CSV (start, end, "
        "peak, peak_score, channels, confirmed, raised; docs/incidents.md) and shade them in "
        "the plot (.mcz models)",
    )
    score.add_argument(
        "--false-incidents",
        type=float_in_range(0.0, low_open=True),
        default=None,
        metavar="N",
        help="with --incidents: open them at the level the fit calibrated for N false incidents "
        "per 10,000 normal rows (default: the higher of the model's floor, its threshold on the "
        "at-once score's scale, and its level for 2; a model file without a calibration: its "
        "threshold; a small model's calibration "
        "was measured on its training rows: optimistic)",
    )
    add_runtime_options(score, device="cpu")
    add_input_options(score)
    add_fleet_arguments(score)
    score.add_argument(
        "--maps",
        default=None,
        help="image models: also write each anomaly map as a PNG to this folder",
    )
    score.set_defaults(func=cmd_score)


def _add_benchmark_parser(sub) -> None:
    bench = sub.add_parser(
        "benchmark",
        help=COMMAND_HELP["benchmark"],
        description="Paper metrics under every threshold protocol (best-f1 is an ORACLE that "
        "uses test labels).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    # imported here, not at the top: the benchmark machinery costs seconds that `madcluster --help`
    # and every other command must not pay (tests/cli/test_startup.py)
    from madcluster.cli.benchmark_options import add_benchmark_arguments

    add_benchmark_arguments(bench)
    bench.set_defaults(func=cmd_benchmark)


def _add_report_parser(sub) -> None:
    add_report_parser(sub, COMMAND_HELP["report"])


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    named = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser({named} if named in COMMAND_HELP else set())
    args = parser.parse_args(argv)
    args.argv = argv  # the command as given, for the provenance of what it writes
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s")
    try:
        with warnings.catch_warnings():
            warnings.showwarning = show_warning  # FarFromTrainingWarning: one line, no file:line
            # KMeans on constant (or nearly so) training windows: the constant-column warning above
            # has said what is wrong and what to do; scikit-learn's raw text after it says it again
            warnings.filterwarnings(
                "ignore",
                message=r"Number of distinct clusters \(\d+\) found smaller than n_clusters",
            )
            status = int(args.func(args) or 0)
    except MADClusterError as exc:
        return _fail(args, exc)
    except BrokenPipeError:  # stdout / stderr reader went away mid-run: stop quietly
        stdout_gone()
        return 1
    except (ValueError, OSError, ImportError) as exc:  # FileNotFoundError, PermissionError, ...
        return _fail(args, exc)
    # a failed allocation: one line, not torch's traceback
    except (MemoryError, RuntimeError) as exc:
        from madcluster.cli.fit_checks import is_out_of_memory, out_of_memory_message

        if not is_out_of_memory(exc):
            raise
        return _fail(args, MemoryError(out_of_memory_message(exc)))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    try:
        sys.stdout.flush()
    except BrokenPipeError:  # `madcluster score ... | head -2`: the work is done, say nothing
        stdout_gone()
    return status


def _fail(args: argparse.Namespace, exc: BaseException) -> int:
    """One line on stderr and exit status 2: the message, never a traceback."""
    if isinstance(exc, OSError) and not isinstance(exc, MADClusterError) and exc.strerror:
        message = f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    else:
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    try:
        print(f"madcluster {args.command}: error: {message}", file=sys.stderr)
    except BrokenPipeError:
        pass
    return 2


__all__ = ["build_parser", "main"]
