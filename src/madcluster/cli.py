"""The ``madcluster`` command line: a thin layer over the Python API.

    madcluster demo                       train and evaluate on the embedded demo series
    madcluster fit DATA -o model.mcz      train on a CSV / Parquet / .npy file
    madcluster score model.mcz DATA       scores CSV (+ PNG plot)
    madcluster benchmark --dataset MSL    paper metrics on a benchmark dataset

Errors in the input end with a one-line message and exit status 2, never a traceback; output
paths, ``--device`` and ``--threshold`` are checked before any training or writing starts.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from madcluster import __version__
from madcluster.exceptions import MADClusterError

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


def _say(*parts: object) -> None:
    """Print a result line on stdout; if the reader has gone (``| head``) keep working silently."""
    try:
        print(*parts, flush=True)
    except BrokenPipeError:
        _stdout_gone()


def _stdout_gone() -> None:
    """Point stdout at /dev/null so later prints and the exit flush do not raise again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout replaced by something without a file descriptor
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives until exit
    finally:
        os.close(devnull)


def _note(args: argparse.Namespace, message: str) -> None:
    """Tell the user something on stderr, unless ``--quiet``."""
    if not getattr(args, "quiet", False):
        print(f"note: {message}", file=sys.stderr)


def _list(names: Sequence[str], limit: int = 12, *, quote: bool = False) -> str:
    """``a, b, c, ... (N more)``: column lists short enough for one line."""
    names = [repr(str(n)) if quote else str(n) for n in names]
    more = f", ... ({len(names) - limit} more)" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


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
        choices=["soft-boundary", "one-class"],
        help="paper's soft boundary, or mean distance as the released script "
        "(default: soft-boundary)",
    )
    group.add_argument(
        "--mode",
        default="full",
        choices=["full", "distance-only", "cluster-only"],
        help="full MADCluster or one of the paper's two ablations (default: full)",
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
    return MADCluster(
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
        verbose=_show_progress(args),
    )


def _print_epochs(args: argparse.Namespace, history: dict) -> None:
    """One line per epoch on stderr when progress bars were off because stderr is not a terminal."""
    if args.quiet or sys.stderr.isatty():
        return
    shown = [("train_loss", "loss"), ("val_loss", "val"), ("nu", "nu"), ("radius", "R")]
    for i, epoch in enumerate(history["epoch"]):
        values = "  ".join(
            f"{label} {history[key][i]:.4f}" for key, label in shown if key in history
        )
        seconds = f"  ({history['seconds'][i]:.2f} s)" if "seconds" in history else ""
        print(f"epoch {int(epoch)}: {values}{seconds}", file=sys.stderr)


def _read_input(path: str, args: argparse.Namespace):
    from madcluster.data.io import read_table

    return read_table(
        path,
        label_column=args.label_column,
        columns=args.columns,
        drop_columns=args.drop_columns,
        header=args.header,
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


def _named(table, path: str) -> bool:
    """Whether the columns carry real names (a CSV header, Parquet), so they are checked by name."""
    from madcluster.data.io import file_format

    return table.has_header and file_format(path) != "npy"


def _features(table, path: str):
    """What the detector sees: a DataFrame when the file named its columns (names are recorded at
    fit and matched at score), else the bare array (columns taken by position)."""
    import pandas as pd

    if _named(table, path):
        return pd.DataFrame(table.values, columns=table.columns, copy=False)
    return table.values


def _label_hint(columns: Sequence[str], args: argparse.Namespace) -> str:
    from madcluster.data.io import label_like_columns

    if args.label_column is not None:
        return ""
    found = label_like_columns(columns)
    if not found:
        return ""
    return (
        f"; the file has a column named {found[0]!r}: if it holds 0/1 labels, "
        f"pass --label-column {found[0]} (or --drop-columns {found[0]})"
    )


def _check_columns(table, path: str, detector, args: argparse.Namespace) -> None:
    """Refuse columns that differ from training, naming them and the option that fixes it."""
    from madcluster.data.io import label_like_columns
    from madcluster.exceptions import DataError

    fitted = getattr(detector, "feature_names_in_", None)
    given = list(table.columns)
    if fitted is not None and _named(table, path):
        fitted = [str(c) for c in fitted]
        missing = [c for c in fitted if c not in given]
        unexpected = [c for c in given if c not in fitted]
        if missing or unexpected:
            parts = []
            if missing:
                parts.append(f"missing {_list(missing, quote=True)}")
            if unexpected:
                parts.append(f"not in the model {_list(unexpected, quote=True)}")
            labels = label_like_columns(unexpected) if args.label_column is None else []
            others = [c for c in unexpected if c not in labels]
            hints = [_label_hint(labels, args).lstrip("; ")] if labels else []
            if missing and len(missing) == len(others):
                hints.append("were columns renamed?")
            elif others and not missing:
                hints.append(f"leave them out with --drop-columns {' '.join(others[:5])}")
            hint = "".join(f"; {h}" for h in hints)
            raise DataError(
                f"{path}: columns do not match the model's ({_list(fitted, quote=True)}): "
                f"{'; '.join(parts)}{hint}"
            )
        if given != fitted:
            _note(args, f"{path}: columns are in another order than at training; matched by name")
        return
    n = detector.n_features_in_
    if len(given) != n:
        hint = _label_hint(given, args) if len(given) == n + 1 else ""
        raise DataError(
            f"{path} has {len(given)} feature columns but the model was trained on {n}{hint}"
        )
    if fitted is not None and not _named(table, path):
        _note(args, f"{path} has no column names: columns taken by position as {_list(fitted)}")


# ---------------------------------------------------------------------------------------- commands
def cmd_fit(args: argparse.Namespace) -> int:
    if Path(args.data).is_dir():  # a folder: one model per entity file (madcluster.fleet)
        from madcluster.fleet import fit_fleet_command

        return fit_fleet_command(args, _detector_from_args(args))
    from madcluster.atomic import check_output_path
    from madcluster.viz import plot_history

    check_output_path(args.output, what="model file", not_same_as=[args.data])
    if args.history_plot:
        check_output_path(
            args.history_plot, what="history plot", not_same_as=[args.data, args.output]
        )
    _apply_runtime(args)
    table = _read_input(args.data, args)
    dropped = [f"{c} ({why})" for c, why in table.dropped.items()]
    _say(f"features ({len(table.columns)}): {_list(table.columns)}")
    if dropped or args.label_column is not None:
        label = [f"{args.label_column} (labels)"] if args.label_column is not None else []
        _say(f"not used as features: {_list(label + dropped)}")
    hint = _label_hint(table.columns, args)
    if hint:
        _note(args, f"{args.data}: training uses every column as a feature{hint}")
    if table.labels is not None and table.labels.any():
        _note(
            args,
            f"{int(table.labels.sum())} rows are labelled anomalous; "
            "training is unsupervised and uses all rows",
        )
    detector = _detector_from_args(args)
    t0 = time.perf_counter()
    detector.fit(_features(table, args.data))
    elapsed = time.perf_counter() - t0
    h = detector.history_
    _print_epochs(args, h)
    detector.save(args.output)
    _say(
        f"trained on {table.values.shape[0]} rows x {table.values.shape[1]} features "
        f"in {elapsed:.1f} s ({len(h['epoch'])} epochs)"
    )
    _say(
        f"final nu={h['nu'][-1]:.4f}  R={h['radius'][-1]:.4f}  "
        f"train loss={h['train_loss'][-1]:.4f}  val loss={h['val_loss'][-1]:.4f}"
    )
    _say(
        f"threshold (train-quantile, contamination={detector.contamination}) "
        f"= {detector.threshold_:.6g}"
    )
    _say(f"model written to {args.output}")
    if args.history_plot:
        plot_history(args.history_plot, h)
        _say(f"training curves written to {args.history_plot}")
    return 0


def _score_outputs(args: argparse.Namespace) -> tuple[str, str | None]:
    """The scores CSV and plot paths, checked before the model is even loaded."""
    from madcluster.atomic import check_output_path

    output = args.output or str(Path(args.data).with_suffix("")) + ".scores.csv"
    inputs = [args.data, args.model]
    check_output_path(output, what="scores file", not_same_as=inputs)
    plot = args.plot or str(Path(output).with_suffix(".png"))
    if plot == "none":
        return output, None
    if Path(plot).resolve() == Path(output).resolve():
        from madcluster.exceptions import OutputPathError

        raise OutputPathError(f"--plot {plot!r} is the scores file too: give another name")
    check_output_path(plot, what="plot", not_same_as=inputs)
    return output, plot


def cmd_score(args: argparse.Namespace) -> int:
    if Path(args.data).is_dir():  # a folder: one scores file per entity (madcluster.fleet)
        from madcluster.fleet import score_fleet_command

        return score_fleet_command(args)
    import pandas as pd

    from madcluster.atomic import atomic_path
    from madcluster.detector import MADCluster
    from madcluster.viz import plot_scores

    output, plot = _score_outputs(args)
    _apply_runtime(args)
    detector = MADCluster.load(args.model, device=args.device)
    table = _read_input(args.data, args)
    _check_columns(table, args.data, detector, args)
    scores = detector.decision_function(_features(table, args.data))
    threshold = detector.threshold_ if args.threshold is None else args.threshold
    predicted = (scores > threshold).astype(np.int64)
    frame = pd.DataFrame({"score": scores, "is_anomaly": predicted})
    if table.timestamp_column is not None:
        name = table.timestamp_column if table.timestamp_column not in frame else "timestamp"
        frame.insert(0, name, table.timestamps)
    if table.labels is not None:
        frame["label"] = table.labels
    with atomic_path(output) as tmp:
        frame.to_csv(tmp, index_label="row")
    _say(
        f"scored {len(scores)} rows: {int(predicted.sum())} above threshold {threshold:.6g} "
        f"({predicted.mean():.2%})"
    )
    _say(f"scores written to {output}")
    if table.labels is not None:
        _print_metrics(scores, table.labels, threshold)
    if plot is not None:
        plot_scores(
            plot,
            scores,
            threshold,
            table.labels,
            title=f"MADCluster scores: {Path(args.data).name}",
        )
        _say(f"plot written to {plot}")
    return 0


def _print_metrics(scores: np.ndarray, labels: np.ndarray, threshold: float) -> dict[str, float]:
    from madcluster.metrics import evaluate

    if labels.min() == labels.max():
        _say("labels are all one class: metrics skipped")
        return {}
    metrics = evaluate(scores, labels, threshold=threshold)
    _say("metrics (no point adjustment; range/VUS metrics on continuous scores, window 100):")
    for key, value in metrics.items():
        _say(f"  {key:<15} {value:.4f}")
    return metrics


DEMO_FILES = ("demo_scores.png", "demo_training.png", "demo_model.mcz", "demo_metrics.json")


def cmd_demo(args: argparse.Namespace) -> int:
    from madcluster.atomic import atomic_write_text, check_output_path
    from madcluster.data.synthetic import make_demo_data
    from madcluster.viz import plot_history, plot_scores

    out = Path(args.output_dir)
    if out.exists() and not out.is_dir():
        from madcluster.exceptions import OutputPathError

        raise OutputPathError(f"--output-dir {args.output_dir!r} is a file, not a folder")
    for name in DEMO_FILES:
        check_output_path(out / name, what="demo output")
    _apply_runtime(args)
    t0 = time.perf_counter()
    data = make_demo_data()
    _say(
        f"demo data: train {data.train.shape}, test {data.test.shape}, "
        f"{data.labels.mean():.1%} anomalous ({len(data.segments)} injected anomalies: "
        "spikes, level shifts, frequency changes, broken correlations)"
    )
    detector = _detector_from_args(args)
    detector.fit(data.train)
    scores = detector.decision_function(data.test)
    h = detector.history_
    _print_epochs(args, h)
    _say(
        f"trained {len(h['epoch'])} epochs in {sum(h['seconds']):.1f} s: "
        f"nu {h['nu'][0]:.4f} -> {h['nu'][-1]:.4f}, "
        f"R {h['radius'][0]:.4f} -> {h['radius'][-1]:.4f}, "
        f"loss {h['train_loss'][0]:.4f} -> {h['train_loss'][-1]:.4f}"
    )
    metrics = _print_metrics(scores, data.labels, detector.threshold_)
    metrics["auc_roc_by_kind"] = _auc_by_kind(scores, data)
    _say(
        "ROC-AUC by anomaly kind: "
        + ", ".join(f"{k} {v:.3f}" for k, v in metrics["auc_roc_by_kind"].items())
    )
    plot_scores(
        out / "demo_scores.png",
        scores,
        detector.threshold_,
        data.labels,
        title="MADCluster on the demo series",
    )
    plot_history(out / "demo_training.png", h)
    detector.save(out / "demo_model.mcz")
    atomic_write_text(
        out / "demo_metrics.json",
        json.dumps({**metrics, "seconds": time.perf_counter() - t0}, indent=2),
    )
    _say(
        f"ROC-AUC {metrics['auc_roc']:.4f}  VUS-ROC {metrics['vus_roc']:.4f}  "
        f"VUS-PR {metrics['vus_pr']:.4f}"
    )
    _say(
        f"plots: {out / 'demo_scores.png'}, {out / 'demo_training.png'}; "
        f"model: {out / 'demo_model.mcz'}"
    )
    _say(f"total time {time.perf_counter() - t0:.1f} s")
    return 0


def _auc_by_kind(scores: np.ndarray, data) -> dict[str, float]:
    """ROC-AUC of each anomaly kind against the normal points only."""
    from madcluster.metrics import auc_roc

    result = {}
    for kind in sorted({seg.kind for seg in data.segments}):
        positive = np.zeros(len(scores), dtype=bool)
        for seg in data.segments:
            if seg.kind == kind:
                positive[seg.start : seg.end] = True
        keep = positive | (data.labels == 0)
        result[kind] = float(auc_roc(scores[keep], positive[keep].astype(np.uint8)))
    return result


def cmd_benchmark(args: argparse.Namespace) -> int:
    from madcluster.evaluation.command_line import run_benchmark_command

    return run_benchmark_command(args)


# ------------------------------------------------------------------------------------------ parser
def build_parser() -> argparse.ArgumentParser:
    from madcluster.fleet import add_fleet_arguments

    parser = argparse.ArgumentParser(
        prog="madcluster",
        description="MADCluster: unsupervised multivariate time-series anomaly detection "
        "(train on normal data, score new data).",
        epilog=DEFAULT_EPILOG,
    )
    parser.add_argument("--version", action="version", version=f"madcluster {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    demo = sub.add_parser(
        "demo",
        help="train and evaluate on the embedded demo series (no download, CPU, < 1 min)",
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
    # Demo settings (lr 3e-3, rho 0.1, stride 5) were picked on the demo series itself; see README.
    _add_training_options(demo, epochs=10, stride=5, lr=3e-3, rho=0.1, threads=1)
    demo.set_defaults(func=cmd_demo)

    fit = sub.add_parser(
        "fit",
        help="train a detector on a CSV / Parquet / .npy file",
        description="Train on (mostly normal) data. Features are standardised with training "
        "statistics; the last 20% of the series (--validation-size) is the validation split for "
        "early stopping. "
        "Progress bars show on a terminal; when stderr is redirected, one line per epoch instead.",
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
    _add_input_options(fit)
    _add_training_options(fit, epochs=10, stride=1)
    add_fleet_arguments(fit)
    fit.set_defaults(func=cmd_fit)

    score = sub.add_parser(
        "score",
        help="score a file with a trained model: scores CSV and PNG plot",
        description="Write one anomaly score per row (higher = more anomalous) and 0/1 predictions "
        "from the model's threshold; with --label-column also print metrics. The CSV has "
        "row, the input's timestamp column (if any), score, is_anomaly and label (if given). "
        "Columns are matched to the model's by name (reordered if needed).",
    )
    score.add_argument("model", help="model file written by `madcluster fit`")
    score.add_argument(
        "data",
        help="file to score, same feature columns as at fit time; or a folder of files, one "
        "entity each (MODEL is then a folder of <entity>.mcz or one model for all): one scores "
        "CSV per entity in -o (default: DATA.scores/)",
    )
    score.add_argument("-o", "--output", default=None, help="scores CSV (default: DATA.scores.csv)")
    score.add_argument(
        "--plot", default=None, help="PNG plot path (default: next to the CSV; 'none' to skip)"
    )
    score.add_argument(
        "--threshold",
        type=_finite_float,
        default=None,
        help="override the model's threshold (a finite number)",
    )
    score.add_argument(
        "--quiet", action="store_true", help="no notes on stderr (results still print)"
    )
    _add_runtime_options(score, device="cpu", threads=None)
    _add_input_options(score)
    add_fleet_arguments(score)
    score.set_defaults(func=cmd_score)

    bench = sub.add_parser("benchmark", help="train, score and evaluate on MSL / SMAP / SMD / PSM with every threshold protocol",
                           description="Paper metrics under every threshold protocol (best-f1 is an ORACLE that uses test labels).",
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    try:
        from madcluster.evaluation.command_line import add_benchmark_arguments
    except ImportError:  # the runner module is optional until it lands
        add_benchmark_arguments = None
    if add_benchmark_arguments is not None:
        add_benchmark_arguments(bench)
    bench.set_defaults(func=cmd_benchmark)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s")
    try:
        status = int(args.func(args) or 0)
    except MADClusterError as exc:
        return _fail(args, exc)
    except BrokenPipeError:  # stdout / stderr reader went away mid-run: stop quietly
        _stdout_gone()
        return 1
    except (ValueError, OSError, ImportError) as exc:  # FileNotFoundError, PermissionError, ...
        return _fail(args, exc)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    try:
        sys.stdout.flush()
    except BrokenPipeError:  # `madcluster score ... | head -2`: the work is done, say nothing
        _stdout_gone()
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
