"""The ``madcluster`` command line: a thin layer over the Python API.

    madcluster demo                       train and evaluate on the embedded demo series
    madcluster fit DATA -o model.mcz      train on a CSV / Parquet / .npy file
    madcluster score model.mcz DATA       scores CSV (+ PNG plot)
    madcluster benchmark --dataset MSL    paper metrics on a benchmark dataset

Errors in the input end with a one-line message and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from madcluster import __version__
from madcluster.exceptions import MADClusterError

DEFAULT_EPILOG = "Run `madcluster COMMAND --help` for the options of each command."


def _add_training_options(
    parser: argparse.ArgumentParser, *, epochs: int, stride: int, lr: float = 1e-3, rho: float = 0.01, threads: int | None = None
) -> None:
    group = parser.add_argument_group("model and training")
    group.add_argument("--embedder", default="drnn", help="Base Embedder name (default: drnn, the paper's Dilated RNN)")
    group.add_argument("--hidden-size", type=int, default=64, help="D-RNN hidden size = feature dimension f (default: 64)")
    group.add_argument("--layers", type=int, default=3, help="D-RNN layers; dilations 1, 2, 4, ... (default: 3)")
    group.add_argument("--window-size", type=int, default=100, help="window length L (default: 100, as the paper)")
    group.add_argument("--stride", type=int, default=stride, help=f"step between training windows (default: {stride}; 1 = every window)")
    group.add_argument("--epochs", type=int, default=epochs, help=f"maximum epochs (default: {epochs}); early stopping on the end of the training series")
    group.add_argument("--batch-size", type=int, default=128, help="windows per batch (default: 128)")
    group.add_argument("--lr", type=float, default=lr, help=f"Adam learning rate (default: {lr:g})")
    group.add_argument("--rho", type=float, default=rho, help=f"soft-boundary weight; R = (1 - rho) quantile of training distances (default: {rho:g}; paper: 0.01)")
    group.add_argument("--distance-loss", default="soft-boundary", choices=["soft-boundary", "one-class"], help="paper's soft boundary, or mean distance as the released script (default: soft-boundary)")
    group.add_argument("--mode", default="full", choices=["full", "distance-only", "cluster-only"], help="full MADCluster or one of the paper's two ablations (default: full)")
    group.add_argument("--contamination", type=float, default=0.01, help="expected anomaly fraction in training data; threshold = (1 - c) quantile of training scores (default: 0.01)")
    group.add_argument("--seed", type=int, default=0, help="random seed; same seed, same scores (default: 0)")
    group.add_argument("--device", default="auto", help="auto (CUDA if available), cpu or cuda (default: auto)")
    group.add_argument("--threads", type=int, default=threads, help=f"CPU threads for torch (default: {threads or 'torch default'}); use 1 when other jobs share the cores")


def _detector_from_args(args: argparse.Namespace):
    import torch

    from madcluster.detector import MADCluster

    if args.threads:
        torch.set_num_threads(args.threads)

    return MADCluster(
        embedder=args.embedder,
        embedder_params={"hidden_size": args.hidden_size, "n_layers": args.layers} if args.embedder == "drnn" else None,
        window_size=args.window_size,
        stride=args.stride,
        epochs=args.epochs,
        batch_size=args.batch_size,
        lr=args.lr,
        rho=args.rho,
        distance_loss=args.distance_loss,
        mode=args.mode,
        contamination=args.contamination,
        random_state=args.seed,
        device=args.device,
        verbose=not args.quiet,
    )


def _read_input(path: str, args: argparse.Namespace):
    from madcluster.data.io import read_table

    return read_table(path, label_column=args.label_column, columns=args.columns, drop_columns=args.drop_columns)


def _add_input_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--label-column", default=None, help="name (or index for .npy) of a 0/1 label column; it is never used as a feature")
    parser.add_argument("--columns", nargs="+", default=None, help="use exactly these feature columns (default: all numeric columns; timestamp columns are dropped)")
    parser.add_argument("--drop-columns", nargs="+", default=None, help="columns to ignore")


# ---------------------------------------------------------------------------------------- commands
def cmd_fit(args: argparse.Namespace) -> int:
    if Path(args.data).is_dir():  # a folder: one model per entity file (madcluster.fleet)
        from madcluster.fleet import fit_fleet_command

        return fit_fleet_command(args, _detector_from_args(args))
    from madcluster.viz import plot_history

    table = _read_input(args.data, args)
    if table.labels is not None and table.labels.any():
        print(f"note: {int(table.labels.sum())} rows are labelled anomalous; training is unsupervised and uses all rows", file=sys.stderr)
    detector = _detector_from_args(args)
    t0 = time.perf_counter()
    detector.fit(table.values)
    elapsed = time.perf_counter() - t0
    detector.save(args.output)
    h = detector.history_
    print(f"trained on {table.values.shape[0]} rows x {table.values.shape[1]} features in {elapsed:.1f} s ({len(h['epoch'])} epochs)")
    print(f"final nu={h['nu'][-1]:.4f}  R={h['radius'][-1]:.4f}  train loss={h['train_loss'][-1]:.4f}  val loss={h['val_loss'][-1]:.4f}")
    print(f"threshold (train-quantile, contamination={detector.contamination}) = {detector.threshold_:.6g}")
    print(f"model written to {args.output}")
    if args.history_plot:
        plot_history(args.history_plot, h)
        print(f"training curves written to {args.history_plot}")
    return 0


def cmd_score(args: argparse.Namespace) -> int:
    if Path(args.data).is_dir():  # a folder: one scores file per entity (madcluster.fleet)
        from madcluster.fleet import score_fleet_command

        return score_fleet_command(args)
    import pandas as pd

    from madcluster.atomic import atomic_path
    from madcluster.detector import MADCluster
    from madcluster.viz import plot_scores

    detector = MADCluster.load(args.model, device=args.device)
    table = _read_input(args.data, args)
    scores = detector.decision_function(table.values)
    threshold = detector.threshold_ if args.threshold is None else args.threshold
    predicted = (scores > threshold).astype(np.int64)
    frame = pd.DataFrame({"score": scores, "is_anomaly": predicted})
    if table.labels is not None:
        frame["label"] = table.labels
    output = args.output or str(Path(args.data).with_suffix("")) + ".scores.csv"
    with atomic_path(output) as tmp:
        frame.to_csv(tmp, index_label="row")
    print(f"scored {len(scores)} rows: {int(predicted.sum())} above threshold {threshold:.6g} ({predicted.mean():.2%})")
    print(f"scores written to {output}")
    if table.labels is not None:
        _print_metrics(scores, table.labels, threshold)
    plot = args.plot or str(Path(output).with_suffix(".png"))
    if plot != "none":
        plot_scores(plot, scores, threshold, table.labels, title=f"MADCluster scores: {Path(args.data).name}")
        print(f"plot written to {plot}")
    return 0


def _print_metrics(scores: np.ndarray, labels: np.ndarray, threshold: float) -> dict[str, float]:
    from madcluster.metrics import evaluate

    if labels.min() == labels.max():
        print("labels are all one class: metrics skipped")
        return {}
    metrics = evaluate(scores, labels, threshold=threshold)
    print("metrics (no point adjustment; range/VUS metrics on continuous scores, window 100):")
    for key, value in metrics.items():
        print(f"  {key:<15} {value:.4f}")
    return metrics


def cmd_demo(args: argparse.Namespace) -> int:
    from madcluster.data.synthetic import make_demo_data
    from madcluster.viz import plot_history, plot_scores

    t0 = time.perf_counter()
    data = make_demo_data()
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    print(f"demo data: train {data.train.shape}, test {data.test.shape}, {data.labels.mean():.1%} anomalous "
          f"({len(data.segments)} injected anomalies: spikes, level shifts, frequency changes, broken correlations)")
    detector = _detector_from_args(args)
    detector.fit(data.train)
    scores = detector.decision_function(data.test)
    h = detector.history_
    print(f"trained {len(h['epoch'])} epochs in {sum(h['seconds']):.1f} s: nu {h['nu'][0]:.4f} -> {h['nu'][-1]:.4f}, "
          f"R {h['radius'][0]:.4f} -> {h['radius'][-1]:.4f}, loss {h['train_loss'][0]:.4f} -> {h['train_loss'][-1]:.4f}")
    metrics = _print_metrics(scores, data.labels, detector.threshold_)
    metrics["auc_roc_by_kind"] = _auc_by_kind(scores, data)
    print("ROC-AUC by anomaly kind: " + ", ".join(f"{k} {v:.3f}" for k, v in metrics["auc_roc_by_kind"].items()))
    plot_scores(out / "demo_scores.png", scores, detector.threshold_, data.labels, title="MADCluster on the demo series")
    plot_history(out / "demo_training.png", h)
    detector.save(out / "demo_model.mcz")
    (out / "demo_metrics.json").write_text(json.dumps({**metrics, "seconds": time.perf_counter() - t0}, indent=2))
    print(f"ROC-AUC {metrics['auc_roc']:.4f}  VUS-ROC {metrics['vus_roc']:.4f}  VUS-PR {metrics['vus_pr']:.4f}")
    print(f"plots: {out / 'demo_scores.png'}, {out / 'demo_training.png'}; model: {out / 'demo_model.mcz'}")
    print(f"total time {time.perf_counter() - t0:.1f} s")
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
    from madcluster.evaluation.runner import run_benchmark_command

    return run_benchmark_command(args)


# ------------------------------------------------------------------------------------------ parser
def build_parser() -> argparse.ArgumentParser:
    from madcluster.fleet import add_fleet_arguments

    parser = argparse.ArgumentParser(
        prog="madcluster",
        description="MADCluster: unsupervised multivariate time-series anomaly detection (train on normal data, score new data).",
        epilog=DEFAULT_EPILOG,
    )
    parser.add_argument("--version", action="version", version=f"madcluster {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    demo = sub.add_parser("demo", help="train and evaluate on the embedded demo series (no download, CPU, < 1 min)",
                          description="Train MADCluster on a built-in synthetic series with injected anomalies, then print metrics and write plots.")
    demo.add_argument("--output-dir", default="madcluster-demo", help="where plots, model and metrics go (default: ./madcluster-demo)")
    demo.add_argument("--quiet", action="store_true", help="no progress bars")
    # Demo settings (lr 3e-3, rho 0.1, stride 5) were picked on the demo series itself; see README.
    _add_training_options(demo, epochs=10, stride=5, lr=3e-3, rho=0.1, threads=1)
    demo.set_defaults(func=cmd_demo)

    fit = sub.add_parser("fit", help="train a detector on a CSV / Parquet / .npy file",
                         description="Train on (mostly normal) data. Features are standardised with training statistics; "
                                     "the last 20%% of the series is the validation split for early stopping.")
    fit.add_argument("data", help="training file: .csv, .parquet or .npy (rows = time steps, columns = features); "
                     "or a folder of such files, one entity each: one model per file, written to the folder -o")
    fit.add_argument("-o", "--output", required=True, help="model file to write (zip of JSON config + weights)")
    fit.add_argument("--history-plot", default=None, help="also write the training curves (nu, R, distance, loss) to this PNG")
    fit.add_argument("--quiet", action="store_true", help="no progress bars")
    _add_input_options(fit)
    _add_training_options(fit, epochs=10, stride=1)
    add_fleet_arguments(fit)
    fit.set_defaults(func=cmd_fit)

    score = sub.add_parser("score", help="score a file with a trained model: scores CSV and PNG plot",
                           description="Write one anomaly score per row (higher = more anomalous) and 0/1 predictions "
                                       "from the model's threshold; with --label-column also print metrics.")
    score.add_argument("model", help="model file written by `madcluster fit`")
    score.add_argument("data", help="file to score, same feature columns as at fit time; or a folder of files, one "
                       "entity each (MODEL is then a folder of <entity>.mcz or one model for all): one scores "
                       "CSV per entity in -o (default: DATA.scores/)")
    score.add_argument("-o", "--output", default=None, help="scores CSV (default: DATA.scores.csv)")
    score.add_argument("--plot", default=None, help="PNG plot path (default: next to the CSV; 'none' to skip)")
    score.add_argument("--threshold", type=float, default=None, help="override the model's threshold")
    score.add_argument("--device", default="cpu", help="device for scoring (default: cpu)")
    _add_input_options(score)
    add_fleet_arguments(score)
    score.set_defaults(func=cmd_score)

    bench = sub.add_parser("benchmark", help="train, score and evaluate on MSL / SMAP / SMD / PSM with every threshold protocol",
                           description="Paper metrics under every threshold protocol (best-f1 is an ORACLE that uses test labels).",
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    try:
        from madcluster.evaluation.runner import add_benchmark_arguments
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
        return int(args.func(args) or 0)
    except MADClusterError as exc:
        print(f"madcluster {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except (ValueError, FileNotFoundError) as exc:
        print(f"madcluster {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
