"""Argument types and the option groups shared by the commands (defined once here)."""

from __future__ import annotations

import argparse
import sys

import numpy as np

from madcluster.method.config import DISTANCE_LOSSES, MODES

DEFAULT_EPILOG = "Run `madcluster COMMAND --help` for the options of each command."


def _positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (threads, epochs, sizes), with a message naming the value."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer (1 or more), got {value}")
    return value


def _finite_float(text: str) -> float:
    """argparse type: a finite number (so ``--threshold nan`` fails before anything is written)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not np.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value


def _contamination(text: str) -> float:
    """argparse type: the expected anomaly fraction, in [0, 0.5), checked before training."""
    value = _finite_float(text)
    if not 0.0 <= value < 0.5:
        raise argparse.ArgumentTypeError(f"must be in [0, 0.5), got {text!r}")
    return value


def _fraction(text: str) -> float:
    """argparse type: a number in [0, 1)."""
    value = _finite_float(text)
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError(f"must be in [0, 1), got {text!r}")
    return value


def _add_training_options(
    parser: argparse.ArgumentParser,
    *,
    epochs: int,
    stride: int,
    lr: float = 1e-3,
    rho: float = 0.01,
    threads: int | None = None,
) -> None:
    group = parser.add_argument_group("model and training")
    group.add_argument(
        "--embedder",
        default="drnn",
        help="Base Embedder name (default: drnn, the paper's Dilated RNN)",
    )
    group.add_argument(
        "--hidden-size",
        type=_positive_int,
        default=64,
        help="D-RNN hidden size = feature dimension f (default: 64)",
    )
    group.add_argument(
        "--layers",
        type=_positive_int,
        default=3,
        help="D-RNN layers; dilations 1, 2, 4, ... (default: 3)",
    )
    group.add_argument(
        "--embedder-param",
        action="append",
        metavar="KEY=VALUE",
        help="keyword argument of the embedder, repeatable; VALUE is read as JSON when it parses "
        "(e.g. --embedder-param hidden_size=32); overrides --hidden-size / --layers",
    )
    group.add_argument(
        "--window-size",
        type=_positive_int,
        default=100,
        help="window length L (default: 100, as the paper)",
    )
    group.add_argument(
        "--stride",
        type=_positive_int,
        default=stride,
        help=f"step between training windows (default: {stride}; 1 = every window)",
    )
    group.add_argument(
        "--epochs",
        type=_positive_int,
        default=epochs,
        help=f"maximum epochs (default: {epochs}); "
        "early stopping on the end of the training series",
    )
    group.add_argument(
        "--validation-size",
        type=_fraction,
        default=0.2,
        help="fraction at the END of the training series held out for early stopping "
        "(default: 0.2); "
        "0 trains on everything for --epochs epochs, best for concatenated series",
    )
    group.add_argument(
        "--batch-size", type=_positive_int, default=128, help="windows per batch (default: 128)"
    )
    group.add_argument(
        "--lr", type=_finite_float, default=lr, help=f"Adam learning rate (default: {lr:g})"
    )
    group.add_argument(
        "--rho",
        type=_finite_float,
        default=rho,
        help="soft-boundary weight; R = (1 - rho) quantile of training distances "
        f"(default: {rho:g}; paper: 0.01)",
    )
    group.add_argument(
        "--distance-loss",
        default="soft-boundary",
        choices=DISTANCE_LOSSES,
        help="paper's soft boundary, or mean distance as the released script "
        "(default: soft-boundary)",
    )
    group.add_argument(
        "--preset",
        default="default",
        choices=["default", "paper"],
        help="default = the library default (what was measured to detect); paper = the paper's "
        "formulation exactly (raw Eq. 7 sum, non-overlapping scoring windows); see the README's "
        "method table (default: default)",
    )
    group.add_argument(
        "--mode",
        default="full",
        choices=MODES,
        help="full MADCluster, the paper's two ablations, or base-only (a base model alone; "
        "needs an embedder with its own loss) (default: full)",
    )
    group.add_argument(
        "--contamination",
        type=_contamination,
        default=0.01,
        help="expected anomaly fraction in training data; "
        "threshold = (1 - c) quantile of training scores (default: 0.01)",
    )
    group.add_argument(
        "--seed", type=int, default=0, help="random seed; same seed, same scores (default: 0)"
    )
    group.add_argument(
        "--precision",
        default="float32",
        choices=("float32", "bfloat16"),
        help="bfloat16: mixed precision for the embedder's matrix products (CPUs with AVX-512 BF16 "
        "or AMX, GPUs); about 2x faster training for the Anomaly Transformer here, same scores "
        "to a rank correlation of .9999 (default: float32)",
    )
    group.add_argument(
        "--roughness-window",
        type=int,
        default=None,
        metavar="W",
        help="append each channel's log mean squared step over the last W steps to the "
        "embedder's input; 0 turns it off (default: the preset's: 3 for the D-RNN, 0 for other "
        "embedders and for --preset paper)",
    )
    _add_runtime_options(group, device="auto", threads=threads)


def _add_runtime_options(group, *, device: str, threads: int | None) -> None:
    default = "auto (CUDA if available)" if device == "auto" else device
    group.add_argument(
        "--device", default=device, help=f"cpu, cuda, cuda:N or auto (default: {default})"
    )
    group.add_argument(
        "--threads",
        type=_positive_int,
        default=threads,
        help=f"CPU threads for torch, 1 or more (default: {threads or 'torch default'}); "
        "use 1 when other jobs share the cores",
    )


def _apply_runtime(args: argparse.Namespace) -> None:
    """Check ``--device`` and set ``--threads`` before any data is read or model trained."""
    import torch

    from madcluster.data.validation import check_device

    check_device(args.device)
    if args.threads:
        torch.set_num_threads(args.threads)


def _show_progress(args: argparse.Namespace) -> bool:
    """Progress bars only on a terminal: redirected to a log they are kilobytes of escape codes."""
    return not args.quiet and sys.stderr.isatty()


def _embedder_params(args: argparse.Namespace) -> dict | None:
    """D-RNN size flags, then every ``--embedder-param KEY=VALUE`` over them."""
    from madcluster.evaluation.config import parse_key_values

    params = {"hidden_size": args.hidden_size, "n_layers": args.layers}
    params = params if args.embedder == "drnn" else {}
    params.update(parse_key_values(getattr(args, "embedder_param", None)) or {})
    return params or None


def _detector_from_args(args: argparse.Namespace):
    from madcluster.detector import MADCluster

    _apply_runtime(args)
    return MADCluster.from_preset(
        getattr(args, "preset", "default"),
        embedder=args.embedder,
        embedder_params=_embedder_params(args),
        window_size=args.window_size,
        stride=args.stride,
        epochs=args.epochs,
        batch_size=args.batch_size,
        lr=args.lr,
        rho=args.rho,
        distance_loss=args.distance_loss,
        mode=args.mode,
        contamination=args.contamination,
        validation_size=args.validation_size,
        random_state=args.seed,
        device=args.device,
        precision=args.precision,
        verbose=_show_progress(args),
        **({} if args.roughness_window is None else {"roughness_window": args.roughness_window}),
    )


def _add_input_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--label-column",
        default=None,
        help="name (or index for .npy / headerless CSV) of a 0/1 label column; "
        "it is never used as a feature",
    )
    parser.add_argument(
        "--columns",
        nargs="+",
        default=None,
        help="use exactly these feature columns "
        "(default: all numeric columns; timestamp columns are dropped)",
    )
    parser.add_argument("--drop-columns", nargs="+", default=None, help="columns to ignore")
    header = parser.add_mutually_exclusive_group()
    header.add_argument(
        "--no-header",
        dest="header",
        action="store_const",
        const=False,
        default=None,
        help="the CSV has no header row: every row is data, columns are named 0, 1, ... "
        "(default: detected; a first row of only numbers is read as data, with a warning)",
    )
    header.add_argument(
        "--header",
        dest="header",
        action="store_const",
        const=True,
        help="the CSV's first row is column names, even if they look like numbers",
    )
    parser.add_argument(
        "--sep",
        default=None,
        help="CSV field separator, e.g. ';' or tab (default: detected among , ; tab |)",
    )
    parser.add_argument(
        "--decimal",
        default=None,
        choices=(".", ","),
        help="CSV decimal mark (default: ',' when fields are not comma-separated and cells "
        "such as 3,14 occur, else '.')",
    )
    parser.add_argument(
        "--encoding",
        default=None,
        help="CSV text encoding, e.g. latin-1 or cp1252 (default: UTF-8; a file that is not "
        "UTF-8 is read as cp1252 with a warning)",
    )
    parser.add_argument(
        "--sort-by-time",
        action="store_true",
        help="sort the rows by the timestamp column (default: rows out of time order are an "
        "error; the scores CSV then follows the sorted order)",
    )


#: ``madcluster fit`` / ``score`` options passed on to :func:`madcluster.data.io.read_table`.
READ_OPTION_NAMES = (
    "label_column", "columns", "drop_columns", "header", "sep", "decimal", "encoding",
    "sort_by_time",
)


def read_options(args: argparse.Namespace) -> dict:
    """The input options given on the command line, as ``read_table`` keyword arguments."""
    return {k: getattr(args, k) for k in READ_OPTION_NAMES if getattr(args, k, None) is not None}
