"""The commands fit, score and benchmark (demo: :mod:`madcluster.cli.demo`, report:
:mod:`madcluster.cli.report`). Each returns the exit status."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from madcluster.atomic import atomic_path, check_output_path
from madcluster.cli.console import print_note, say
from madcluster.cli.finishing import FitSignals
from madcluster.cli.input_options import check_input_columns, read_input
from madcluster.cli.options import detector_from_args, detector_params_from_args
from madcluster.cli.runtime_options import apply_runtime
from madcluster.cli.score_outputs import write_score_outputs
from madcluster.data.columns import feature_values, label_hint, name_list
from madcluster.exceptions import DataError, OutputPathError, ParameterError
from madcluster.method.diagnostics import collapse_diagnosis


def cmd_fit(args: argparse.Namespace) -> int:
    from madcluster.cli.images import fit_images_command, is_image_embedder

    if is_image_embedder(args.embedder):  # an image folder / MVTec class folder
        return fit_images_command(args)
    if Path(args.data).is_dir():  # a folder: one model per entity file (madcluster.fleet)
        from madcluster.cli.fleet import fit_fleet_command
        from madcluster.cli.images import image_folder_hint

        hint = image_folder_hint(args.data)
        if hint:
            raise DataError(hint)

        return fit_fleet_command(args, {**detector_params_from_args(args), "verbose": False})
    from madcluster.cli.fit_checks import check_layers, check_memory, check_series_settings
    from madcluster.training.checkpoint import TrainingInterrupted, partial_path
    from madcluster.viz import plot_history

    check_output_path(args.output, what="model file", not_same_as=[args.data])
    if args.history_plot:
        check_output_path(
            args.history_plot, what="history plot", not_same_as=[args.data, args.output]
        )
    check_layers(detector_params_from_args(args) | {"window_size": _window_size(args)})
    apply_runtime(args)
    table = _tsbad_training_rows(args, read_input(args.data, args))
    dropped = [f"{c} ({why})" for c, why in table.dropped.items()]
    say(f"features ({len(table.columns)}): {name_list(table.columns)}")
    if dropped or args.label_column is not None:
        label = [f"{args.label_column} (labels)"] if args.label_column is not None else []
        say(f"not used as features: {name_list(label + dropped)}")
    hint = label_hint(table.columns, args.label_column)
    if hint:
        print_note(args, f"{args.data}: training uses every column as a feature{hint}")
    if table.labels is not None and table.labels.any():
        print_note(
            args,
            f"{int(table.labels.sum())} rows are labelled anomalous; "
            "training is unsupervised and uses all rows",
        )
    detector = detector_from_args(args)
    check_series_settings(
        detector, len(table), lambda message: print(f"warning: {message}", file=sys.stderr)
    )
    check_memory(detector, table.values.shape[1], n_rows=len(table))
    checkpoint = partial_path(args.output)
    t0 = time.perf_counter()
    signals = FitSignals()  # SIGTERM (timeout, systemd, docker stop) stops as Ctrl-C does
    try:
        with signals.fitting():
            detector.fit(
                feature_values(table, args.data),
                checkpoint=checkpoint,
                resume=args.resume,
                finishing=signals.finishing(),
            )
    except DataError as exc:
        if "non-finite scores" in str(exc):  # on its own training data: the training, not the input
            raise DataError(_diverged(detector)) from None
        raise
    except TrainingInterrupted as stop:
        said = stop.describe()  # Ctrl-C's as it was; SIGTERM's named
        print(said if signals.received is None else f"{signals.name}: {said}", file=sys.stderr)
        if stop.path is not None:
            print("run the same command with --resume to go on from there", file=sys.stderr)
        return signals.status  # the shell's: 130 for Ctrl-C, 143 for SIGTERM
    # a second Ctrl-C after the last epoch: the loop's last state is on disk
    except KeyboardInterrupt:
        if not checkpoint.is_file():
            raise
        print(
            "stopped after training, before the model was finished; the training is saved to "
            f"{checkpoint}: run the same command with --resume to finish the model without "
            "training again",
            file=sys.stderr,
        )
        return signals.status
    elapsed = time.perf_counter() - t0
    h = detector.history_
    detector.save(args.output)
    if signals.deferred is not None:
        print(
            f"{signals.name} came after the last epoch: the model was finished and written to "
            f"{args.output}",
            file=sys.stderr,
        )
    say(
        f"trained on {table.values.shape[0]} rows x {table.values.shape[1]} features "
        f"in {elapsed:.1f} s ({len(h['epoch'])} epochs)"
    )
    say(f"final {_final_values(h)}")
    collapsed, verdict = collapse_diagnosis(h)
    if collapsed:
        print(f"warning: {verdict}", file=sys.stderr)
    say(
        f"threshold (train-{detector.threshold}, contamination={detector.contamination}) "
        f"= {detector.threshold_:.6g}"
    )
    if not detector.verbose:  # a verbose fit has printed them
        say(f"score = {detector.model_.combination.describe()}")
        from madcluster.estimator.incident_scoring import expectation

        say(expectation(detector.model_))
    say(f"model written to {args.output}")
    if args.history_plot:
        plot_history(h, path=args.history_plot)
        say(f"training curves written to {args.history_plot}")
    return 0


def _tsbad_training_rows(args: argparse.Namespace, table: Any) -> Any:
    """A TSB-AD file (``..._tr_N_1st_F.csv``) trains on its first N rows, as TSB-AD's protocol and
    ``madcluster benchmark`` do (the rest holds the anomalies), with its ``Label`` column as labels;
    said on stderr. ``--all-rows`` trains on every row."""
    import dataclasses

    from madcluster.data.tsbad import FILE_NAME, LABEL_COLUMN, parse_tsbad_name

    if not FILE_NAME.match(Path(args.data).name):
        return table
    name = parse_tsbad_name(args.data)
    if args.label_column is None and LABEL_COLUMN in table.columns:
        args.label_column = LABEL_COLUMN
        table = read_input(args.data, args)
        print_note(
            args,
            f"{args.data}: a TSB-AD file: its {LABEL_COLUMN!r} column is read as labels, not as a "
            "feature",
        )
    if getattr(args, "all_rows", False) or name.train_length >= len(table):
        return table
    n = name.train_length
    print_note(
        args,
        f"{args.data}: a TSB-AD file (tr_{n}): training on its first {n} of {len(table)} rows, as "
        "TSB-AD's protocol does (the rest holds the anomalies); --all-rows trains on every row",
    )
    return dataclasses.replace(
        table,
        values=table.values[:n],
        labels=None if table.labels is None else table.labels[:n],
        timestamps=None if table.timestamps is None else table.timestamps[:n],
    )


def _window_size(args: argparse.Namespace) -> int:
    """The window the fit will use: the flag's, else the preset's or the estimator's default."""
    from madcluster.cli.options import signature_default
    from madcluster.presets import PRESETS

    if args.window_size is not None:
        return int(args.window_size)
    preset = PRESETS.get(args.preset or "default") or {}
    return int(preset.get("window_size", signature_default("window_size")))


def _diverged(detector: Any) -> str:
    """The message for a fit whose model scores its own training data as NaN / inf: the training
    diverged (the input was checked for NaN and scale before it started)."""
    from madcluster.cli.options import signature_default

    lr = getattr(detector, "lr", None)
    if lr is None:
        return (
            "training diverged: the trained model's scores on its own training data are not finite"
        )
    return (
        "training diverged: the trained model's scores on its own training data are not finite "
        f"(learning rate {lr:g}; try a lower --lr, the default is {signature_default('lr'):g}, or "
        "fewer --epochs)"
    )


def _score_outputs(args: argparse.Namespace) -> tuple[str, str | None]:
    """The scores CSV and plot paths, checked before the model is even loaded."""
    output = args.output or str(Path(args.data).with_suffix("")) + ".scores.csv"
    inputs = [args.data, args.model]
    check_output_path(output, what="scores file", not_same_as=inputs)
    plot = args.plot or str(Path(output).with_suffix(".png"))
    if plot == "none":
        return output, None
    if Path(plot).resolve() == Path(output).resolve():
        raise OutputPathError(f"--plot {plot!r} is the scores file too: give another name")
    check_output_path(plot, what="plot", not_same_as=inputs)
    return output, plot


def _incidents_path(args: argparse.Namespace, output: str, plot: str | None) -> str | None:
    """``--incidents``' path, checked before any work (None without the option)."""
    if args.false_incidents is not None and args.incidents is None:
        raise ParameterError("--false-incidents needs --incidents PATH (where to write them)")
    if args.incidents is None:
        return None
    taken = [output] + ([plot] if plot else [])
    if any(Path(args.incidents).resolve() == Path(p).resolve() for p in taken):
        raise OutputPathError(f"--incidents {args.incidents!r} is another output too")
    check_output_path(args.incidents, what="incidents file", not_same_as=[args.data, args.model])
    return args.incidents


def cmd_score(args: argparse.Namespace) -> int:
    from madcluster.cli.images import is_image_model, score_images_command

    plain = not (str(args.model).lower().endswith(".onnx") or Path(args.data).is_dir())
    if args.incidents is not None and (not plain or is_image_model(args.model)):
        raise ParameterError("--incidents needs a .mcz model of series and one data file")
    if str(args.model).lower().endswith(".onnx") and not Path(args.data).is_dir():
        from madcluster.cli.deploy import score_onnx_command

        return score_onnx_command(args, _score_outputs(args))
    if is_image_model(args.model):
        return score_images_command(args)
    if Path(args.data).is_dir():  # a folder: one scores file per entity (madcluster.fleet)
        from madcluster.cli.fleet import score_fleet_command

        return score_fleet_command(args)
    output, plot = _score_outputs(args)
    incidents_path = _incidents_path(args, output, plot)
    figures = _figure_paths(args.figures)
    table = read_input(args.data, args)  # before torch loads (seconds): a bad file says so at once
    from madcluster.estimator.detector import MADCluster

    apply_runtime(args)
    detector = MADCluster.load(args.model, device=args.device)
    detector.set_params(n_jobs=args.threads)  # this command's threads, not the fitting machine's
    check_input_columns(table, args, detector)
    scores = detector.decision_function(feature_values(table, args.data))
    threshold = detector.threshold_ if args.threshold is None else args.threshold
    predicted = (scores > threshold).astype(np.int64)
    contributions = None
    if not args.no_explain:
        contributions = detector.explain(feature_values(table, args.data), rows=predicted == 1)
    spans = None
    if incidents_path is not None:
        incidents = detector.incidents(feature_values(table, args.data), args.false_incidents)
        with atomic_path(incidents_path) as tmp:
            incidents.to_csv(tmp, index=False)
        ends = [None if gone else int(e) for e, gone in zip(incidents.end, incidents.end.isna())]
        spans = list(zip(incidents.start.tolist(), ends))  # end None: still open
        say(f"{len(incidents)} incidents written to {incidents_path}")
    write_score_outputs(
        table, args.data, scores, threshold, output, plot, contributions=contributions,
        incidents=spans,
    )  # fmt: skip
    if figures:
        _model_figures(detector, feature_values(table, args.data), table, figures)
    return 0


def _figure_paths(folder: str | None) -> tuple[Path, Path] | None:
    """``--figures DIR``'s two PNG paths, checked before any work (None without the option)."""
    if not folder:
        return None
    paths = (Path(folder) / "embedding.png", Path(folder) / "distance_bands.png")
    for path in paths:
        check_output_path(path, what="figure")
    return paths


def _model_figures(detector, features, table, paths: tuple[Path, Path]) -> None:
    """The paper's embedding and sigma-band figures of a loaded model on the scored data."""
    from madcluster.viz import plot_distance_bands, plot_embedding

    embedding, bands = paths
    embedding.parent.mkdir(parents=True, exist_ok=True)
    plot_embedding(detector, features, table.labels, path=embedding)
    plot_distance_bands(detector, features, table.labels, timestamps=table.timestamps, path=bands)
    say(f"figures written to {embedding} and {bands}")


def cmd_benchmark(args: argparse.Namespace) -> int:
    from madcluster.cli.benchmark import run_benchmark_command

    return run_benchmark_command(args)


def _final_values(history: dict) -> str:
    """The last epoch's nu, R and losses, for those the head records (base-only has no nu or R;
    k > 1 has no nu)."""
    names = (("nu", "nu"), ("radius", "R"), ("train_loss", "train loss"), ("val_loss", "val loss"))
    return "  ".join(f"{label}={history[key][-1]:.4f}" for key, label in names if history.get(key))
