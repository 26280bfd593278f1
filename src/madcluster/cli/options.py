"""The option groups shared by the commands (defined once here); their argument types are in
:mod:`madcluster.cli.arg_types`."""

from __future__ import annotations

import argparse
from typing import Any

from madcluster.cli.arg_types import (
    EVERY_WINDOW,
    SEED_MAX,
    checked_param,
    epoch_windows,
    float_in_range,
    fraction_option,
    int_in_range,
    positive_int,
)
from madcluster.cli.runtime_options import add_runtime_options, apply_runtime, show_progress
from madcluster.defaults import THRESHOLD_METHODS
from madcluster.estimator.params import MADCLUSTER_PARAMS, PRECISION_NAMES
from madcluster.method.config import DISTANCE_LOSSES, MODES
from madcluster.presets import PRESETS
from madcluster.score.input_terms import DEFAULT_WEIGHTS_TEXT, INPUT_TERMS, WEIGHT_RULES
from madcluster.score.rules import RULES

DEFAULT_EPILOG = "Run `madcluster COMMAND --help` for the options of each command."


_FROM_SIGNATURE = object()
# (flag, estimator parameter, argparse keywords, help); every default is the estimator's (shown by
# SettingsHelpFormatter, read from the signature) unless a command sets its own (the demo's)
TRAINING_FLAGS: tuple[tuple[str, str, dict[str, Any], str], ...] = (
    ("--embedder", "embedder", {}, "Base Embedder name (drnn: the paper's Dilated RNN)"),
    (
        "--hidden-size",
        "drnn.hidden_size",
        {"type": positive_int},
        "D-RNN hidden size = feature dimension f",
    ),
    ("--layers", "drnn.n_layers", {"type": positive_int}, "D-RNN layers; dilations 1, 2, 4, ..."),
    ("--window-size", "window_size", {"type": positive_int}, "window length L (the paper's)"),
    (
        "--stride",
        "stride",
        {"type": positive_int},
        "step between training windows (1 = every window)",
    ),
    (
        "--epochs",
        "epochs",
        {"type": positive_int},
        "maximum epochs; early stopping on the end of the training series",
    ),
    (
        "--epoch-windows",
        "epoch_windows",
        {"type": epoch_windows, "metavar": "N|all"},
        (
            "training windows drawn anew each epoch, so an epoch costs the same on any series "
            "length (auto: 15 batches, 480 for the D-RNN, 1920 for the others); 'all' trains "
            "on every window each epoch, as before (slow on long series)"
        ),
    ),
    (
        "--validation-size",
        "validation_size",
        {"type": fraction_option},
        (
            "fraction at the END of the training series held out for early stopping; 0 trains on "
            "everything for --epochs epochs, best for concatenated series"
        ),
    ),
    (
        "--batch-size",
        "batch_size",
        {"type": positive_int},
        (
            "windows per batch; auto: 32 for the D-RNN, whose step costs about the same at any "
            "batch on a CPU, 128 for the others"
        ),
    ),
    (
        "--lr",
        "lr",
        {"type": float_in_range(0.0, 1.0, low_open=True)},
        "Adam learning rate, in (0, 1]",
    ),
    (
        "--rho",
        "rho",
        {"type": float_in_range(0.0, 1.0, low_open=True)},
        "soft-boundary weight; R = (1 - rho) quantile of training distances (paper: 0.01)",
    ),
    (
        "--distance-loss",
        "distance_loss",
        {"choices": DISTANCE_LOSSES},
        "paper's soft boundary, or mean distance as the released script",
    ),
    (
        "--preset",
        "preset",
        {"choices": tuple(PRESETS)},
        (
            "default = the library default (what was measured to detect); paper = the paper's "
            "formulation exactly (raw Eq. 7 sum, non-overlapping scoring windows); streaming = the "
            "default without input terms: its streamed scores are final at once (the default's L "
            "rows later), at the cost of the terms' detection; fast = batches of 32, 480 windows "
            "an epoch: what the default D-RNN trains with now (the same fit to rounding), for "
            "another --embedder that budget in place of its batches of 128; see docs/method.md"
        ),
    ),
    (
        "--mode",
        "mode",
        {"choices": MODES},
        (
            "full MADCluster, the paper's two ablations, or base-only (the base model without "
            "MADCluster; needs an embedder with its own loss). Every mode adds the same "
            "--input-terms, so full and base-only differ by MADCluster alone; --input-terms none "
            "(or --preset paper): the base model alone"
        ),
    ),
    (
        "--contamination",
        "contamination",
        {"type": checked_param("contamination")},
        (
            "expected anomaly fraction in training data; threshold = (1 - c) quantile of training "
            "scores"
        ),
    ),
    (
        "--threshold-method",
        "threshold",
        {"choices": THRESHOLD_METHODS},
        (
            "how training scores become the model's threshold: quantile = their (1 - "
            "contamination) quantile; pot = peaks over threshold (OmniAnomaly's): a generalized "
            "Pareto tail fitted to the top 2 %% of training scores, threshold exceeded with "
            "probability contamination"
        ),
    ),
    (
        "--seed",
        "random_state",
        {"type": int_in_range(0, SEED_MAX)},
        "random seed, 0 to 2**32 - 1; same seed, same scores",
    ),
    (
        "--precision",
        "precision",
        {"choices": PRECISION_NAMES},
        (
            "bfloat16: mixed precision for the embedder's matrix products (CPUs with AVX-512 BF16 "
            "or AMX, GPUs); faster there, same scores up to rounding"
        ),
    ),
    (
        "--roughness-window",
        "roughness_window",
        {"type": int_in_range(0), "metavar": "W"},
        (
            "append each channel's log mean squared step over the last W steps to the embedder's "
            "input; 0 turns it off (None: the embedder's default, 3 for the D-RNN, 0 for the "
            "others and for --preset paper)"
        ),
    ),
    (
        "--input-terms",
        "input_terms",
        {"nargs": "+", "choices": (*INPUT_TERMS, "none"), "metavar": "TERM"},
        (
            "input-space terms added to MADCluster's score: kmeans (window KMeans), ar (ridge "
            "next-step error), discord (distance of each step's subsequence to its nearest "
            "training one), cross (each column's error given the others at the same step: the "
            "at-once score only, which incidents page on) or none"
        ),
    ),
    (
        "--part-weight",
        "part_weights",
        {"action": "append", "metavar": "PART=W"},
        (
            "weight of a standardised part, repeatable: own (MADCluster's score), kmeans, ar, "
            "discord, cross, e.g. own=1 (default: by the share of continuous training columns, "
            f"{DEFAULT_WEIGHTS_TEXT}); or "
            "'evidence': weigh each part by what it finds of anomalies injected into held-out "
            "training rows (the fit prints it), or 'columns'"
        ),
    ),
    (
        "--part-rule",
        "part_rule",
        {"choices": tuple(RULES)},
        (
            "how the weighted parts add up (default few-valued-tail-excess: positive-zscore-sum "
            "on continuous columns, tail-excess-sum on few-valued ones, mixed by their share; "
            "positive-zscore-sum: a part below its training mean adds nothing; tail-excess-sum: "
            "a part counts only beyond its training tail; zscore-sum: the older files' sum)"
        ),
    ),
    (
        "--part-smoothing",
        "part_smoothing",
        {"action": "append", "metavar": "PART=STEPS"},
        (
            "steps of the centred mean own or ar is read through, repeatable; 1: none (default: "
            "own = window // 2, ar = window // 10), e.g. own=1"
        ),
    ),
    (
        "--series-scale-rows",
        "series_scale_rows",
        {"type": int, "metavar": "ROWS"},
        (
            "each part's final contribution is divided by its spread on the scored series' first "
            "ROWS steps (at least its training spread), so a part that moved on most rows cannot "
            "drown the others; a stream's first final scores wait for them (default 3000; 0: off)"
        ),
    ),
)
# what every command that trains uses where the estimator has no default of its own to offer
CLI_SETTINGS = {"random_state": 0}


class SettingsHelpFormatter(argparse.HelpFormatter):
    """Shows each training flag's default: the command's own, else the estimator's parameter
    table's (read only when help is printed: an embedder's defaults import its module)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        param = getattr(action, "estimator_param", None)
        if param is None:
            return action.help
        default = getattr(action, "shown_default", _FROM_SIGNATURE)
        if default is _FROM_SIGNATURE:
            default = help_default(param)
        return f"{action.help} (default: {default})"


def help_default(param: str) -> Any:
    """:func:`signature_default` for help text: an embedder's or the image detector's default is
    read from its source (:mod:`madcluster.cli.help_defaults`), so ``fit --help`` imports no
    torch."""
    if "." in param:
        from madcluster.cli.help_defaults import NOT_FOUND, source_default

        found = source_default(param)
        if found is not NOT_FOUND:
            return found
    return signature_default(param)


def signature_default(param: str) -> Any:
    """The default of an estimator parameter (its table's), ``image.parameter`` of the image
    detector, or ``embedder.argument`` of a registered embedder (its signature's)."""
    import inspect

    from madcluster.presets import PRESETS

    if param == "preset":
        return next(iter(PRESETS))
    owner, _, name = param.rpartition(".")
    if not owner:
        return MADCLUSTER_PARAMS[name].default
    if owner == "image":
        from madcluster.images.detector import IMAGE_PARAMS

        return IMAGE_PARAMS[name].default
    from madcluster.embedders import EMBEDDERS

    return inspect.signature(EMBEDDERS[owner]).parameters[name].default


def add_training_options(parser: argparse.ArgumentParser, settings: dict[str, Any]) -> None:
    """The model and training flags, all ``None`` unless given; ``settings`` are the command's own
    defaults over the estimator's (the demo's), applied by :func:`detector_params_from_args`."""
    group = parser.add_argument_group("model and training")
    for flag, param, kwargs, text in TRAINING_FLAGS:
        action = group.add_argument(flag, default=None, help=text, **kwargs)
        action.estimator_param = param
        if param in settings:
            action.shown_default = settings[param]
    group.add_argument(
        "--embedder-param",
        action="append",
        metavar="KEY=VALUE",
        help="keyword argument of the embedder, repeatable; VALUE is read as JSON when it parses "
        "(e.g. --embedder-param hidden_size=32); overrides --hidden-size / --layers",
    )
    parser.set_defaults(settings=dict(settings))
    add_runtime_options(group)


def detector_params_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The parameters of :func:`~madcluster.factory.make_detector` the flags given describe."""
    # here, not at the top: the benchmark package costs seconds that parsing must not pay
    from madcluster.benchmark.config import parse_key_values
    from madcluster.embedders import EMBEDDERS

    params = dict(getattr(args, "settings", {}))
    sizes: dict[str, Any] = {}
    for flag, param, _, _ in TRAINING_FLAGS:
        value = getattr(args, flag[2:].replace("-", "_"))
        owner, _, name = param.rpartition(".")
        if value is not None and not owner:
            params[param] = value
        elif value is not None:
            sizes[name] = value
    if params.get("epoch_windows") == EVERY_WINDOW:
        params["epoch_windows"] = None
    if "input_terms" in params:  # --input-terms kmeans ar | none
        terms = tuple(params["input_terms"])
        if "none" in terms and len(terms) > 1:
            raise SystemExit("--input-terms: 'none' stands alone (no input terms)")
        params["input_terms"] = None if terms == ("none",) else terms
    if "part_weights" in params:  # --part-weight own=1 --part-weight ar=0
        chosen = params["part_weights"]
        named = [w for w in chosen if w in WEIGHT_RULES]
        if named and len(chosen) > 1:
            raise SystemExit(f"--part-weight {named[0]} cannot be combined with other weights")
        params["part_weights"] = named[0] if named else _part_values(chosen, "--part-weight", float)
    if "part_smoothing" in params:  # --part-smoothing own=1
        params["part_smoothing"] = _part_values(params["part_smoothing"], "--part-smoothing", int)
    embedder = EMBEDDERS.get(params.get("embedder", signature_default("embedder")))
    embedder_params = {k: v for k, v in sizes.items() if k in getattr(embedder, "size_options", {})}
    embedder_params.update(parse_key_values(getattr(args, "embedder_param", None)) or {})
    if embedder_params:
        params["embedder_params"] = embedder_params
    if getattr(args, "device", None) is not None:
        params["device"] = args.device
    if getattr(args, "threads", None) is not None:
        params["n_jobs"] = args.threads
    params["verbose"] = show_progress(args)
    return params


def _part_values(items: list[str], option: str, kind: type) -> dict[str, Any]:
    """``["own=1", "ar=0"]`` as ``{"own": kind(1), "ar": kind(0)}``, or a one-line exit."""
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        try:
            out[name.strip()] = kind(value)
        except ValueError:
            sep = ""
        if not sep:
            raise SystemExit(
                f"{option} {item!r}: give PART={'WEIGHT' if kind is float else 'STEPS'}, e.g. own=1"
            )
    return out


def detector_from_args(args: argparse.Namespace) -> Any:
    """Check the runtime flags, then build the detector the training flags describe."""
    from madcluster.factory import make_detector

    apply_runtime(args)
    return make_detector(detector_params_from_args(args))
