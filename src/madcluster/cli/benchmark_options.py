"""The options of ``madcluster benchmark`` and its help text.

Options that name a :class:`~madcluster.benchmark.config.BenchmarkConfig` field are defined
once, in :data:`FIELD_OPTIONS`, with ``None`` as their argparse default: an option left out takes
the grid file's value, else the config's default, so the defaults live in the config alone.
"""

from __future__ import annotations

import argparse
from dataclasses import MISSING
from typing import Any

from madcluster.benchmark.config import BenchmarkConfig
from madcluster.benchmark.schema import DETECTORS
from madcluster.cli.arg_types import (
    SEED_MAX,
    float_in_range,
    fraction_option,
    int_in_range,
    threads_option,
)
from madcluster.cli.executor_options import add_executor_arguments
from madcluster.cli.image_benchmark import add_image_benchmark_arguments
from madcluster.defaults import DEFAULT_EPOCHS
from madcluster.evaluation.released_protocol import STEP_ORDER, STEPS
from madcluster.evaluation.thresholds import PROTOCOLS
from madcluster.method.config import MODES

_LIST = {"nargs": "+"}


# (group, flag, argparse keywords); the dest is the BenchmarkConfig field of the same name
FIELD_OPTIONS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    (
        "what",
        "--dataset",
        {
            **_LIST,
            "help": "MSL, SMAP, SMD, PSM (any case) or folders with "
            "train/test files; several make a grid",
        },
    ),
    (
        "what",
        "--detector",
        {
            **_LIST,
            "choices": list(DETECTORS),
            "help": "madcluster, or a window baseline pca / kmeans; several make a grid "
            "(default: madcluster)",
        },
    ),
    (
        "what",
        "--embedder",
        {
            **_LIST,
            "help": "MADCluster's Base Embedder: {names}; several make a grid (default: drnn; "
            "pca / kmeans here mean --detector pca / kmeans, the older spelling)",
        },
    ),
    (
        "what",
        "--mode",
        {
            **_LIST,
            "choices": list(MODES),
            "help": "MADCluster objective: full, or "
            "the paper's ablations distance-only (row 'DeepSVDD') and cluster-only "
            "(row 'Clustering'); several make a grid (default: full; baselines ignore "
            "it)",
        },
    ),
    (
        "what",
        "--seeds",
        {
            **_LIST,
            "type": int_in_range(0, SEED_MAX),
            "help": "one run per seed; mean and std over seeds",
        },
    ),
    (
        "what",
        "--entities",
        {**_LIST, "help": "with --per-entity: only these entities (names from entities.csv)"},
    ),
    (
        "what",
        "--data-dir",
        {"help": "data directory (default: $MADCLUSTER_DATA_DIR, else ../shared/datasets)"},
    ),
    (
        "what",
        "--out",
        {
            "help": "results folder; 'none' writes nothing (default: ./madcluster-results; the "
            "committed results pass benchmarks/results explicitly)"
        },
    ),
    (
        "what",
        "--tag",
        {"help": "suffix of the result name, to keep variants apart (letters, digits, '-', '.')"},
    ),
    (
        "model",
        "--epochs",
        {
            "type": int_in_range(1),
            "help": "maximum epochs; early stopping on the END of "
            "the training series, never test (default: "
            f"{DEFAULT_EPOCHS}, as MADCluster())",
        },
    ),
    (
        "model",
        "--stride",
        {
            "type": int_in_range(1),
            "help": "step between training windows (MADCluster; "
            "default 1) or between windows (baselines; default window-size // 10)",
        },
    ),
    (
        "model",
        "--window-size",
        {"type": int_in_range(1), "help": "window length L (the paper's)"},
    ),
    ("model", "--batch-size", {"type": int_in_range(1), "help": "windows per batch"}),
    (
        "model",
        "--lr",
        {"type": float_in_range(0.0, 1.0, low_open=True), "help": "Adam learning rate, in (0, 1]"},
    ),
    (
        "model",
        "--weight-decay",
        {"type": float_in_range(0.0), "help": "Adam weight decay, lambda * Omega(W)"},
    ),
    ("model", "--hidden-size", {"type": int_in_range(1), "help": "D-RNN hidden size f"}),
    (
        "model",
        "--layers",
        {"type": int_in_range(1), "help": "D-RNN layers, dilations 1, 2, 4, ..."},
    ),
    (
        "model",
        "--validation-size",
        {"type": fraction_option, "help": "fraction at the end of train for early stopping"},
    ),
    (
        "model",
        "--patience",
        {"type": int_in_range(1), "help": "epochs without validation improvement before stopping"},
    ),
    (
        "model",
        "--n-components",
        {"type": float, "help": "pca: variance fraction kept"},
    ),
    ("model", "--n-centroids", {"type": int_in_range(1), "help": "kmeans: number of centroids k"}),
    (
        "model",
        "--embedder-param",
        {
            "action": "append",
            "metavar": "KEY=VALUE",
            "help": "keyword "
            "argument of the embedder, repeatable; VALUE is read as JSON "
            "when it parses (e.g. --embedder-param hidden_size=32)",
        },
    ),
    (
        "model",
        "--detector-param",
        {
            "action": "append",
            "metavar": "KEY=VALUE",
            "help": "any other "
            "keyword argument of the detector, repeatable (e.g. "
            "--detector-param rho=0.1)",
        },
    ),
    ("model", "--device", {"help": "cpu, cuda or auto (default: cpu)"}),
    (
        "model",
        "--threads",
        {"type": threads_option, "help": "torch CPU threads per task (default: 1)"},
    ),
    (
        "metrics",
        "--contamination",
        {
            "type": float,
            "help": "train-quantile: fraction of training scores above the threshold",
        },
    ),
    (
        "metrics",
        "--anomaly-ratio",
        {
            "type": float,
            "help": "alpha of test-ratio / combined as a "
            "fraction (0.01 = 1%%) (default: the dataset's test anomaly "
            "ratio, from the labels)",
        },
    ),
    ("metrics", "--metric-window", {"type": int_in_range(1), "help": "Range-AUC / VUS window"}),
    (
        "released",
        "--released-steps",
        {
            **_LIST,
            "choices": [*STEP_ORDER, "none"],
            "metavar": "STEP",
            "help": "apply these steps of the released code's evaluation (a b c d e, any subset; "
            "'none' = honest, the default), to measure how much each inflates the numbers: "
            "a = one model per entity with MinMax scaling (implies --per-entity); "
            "b = stride-1 window scores, a window anomalous if any point in it is; "
            "c = best-F1 threshold on the TEST LABELS as the headline (ORACLE); "
            "d = range / VUS on the 0/1 predictions; "
            "e = the TEST SET as validation set: early stopping, best checkpoint, R over "
            "train + test (LEAKS test data into training). The row's name and every table "
            "carry released-<steps>[-oracle][-leak]",
        },
    ),
)


_GROUPS = {
    "what": "what to run",
    "model": "model and training",
    "metrics": "thresholds and metrics",
    "released": "the released code's evaluation, step by step (to measure its inflation only)",
}


def add_benchmark_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``madcluster benchmark`` (the CLI calls this on its sub-parser)."""
    from madcluster.embedders import EMBEDDERS

    lines = [
        (
            "Threshold protocols (every one is computed and reported; predictions are "
            "score > threshold):"
        ),
    ]
    for p in PROTOCOLS.values():
        lines.append(f"  {p.name + (' (ORACLE)' if p.oracle else ''):<24} {p.description}")
    lines += [
        "",
        "test-ratio and combined use alpha = the dataset's known test anomaly ratio unless",
        "--anomaly-ratio is given (as the paper does): a number taken from the test labels.",
        (
            "best-f1 reads the test labels to pick the threshold: an ORACLE, never a deployable "
            "result."
        ),
        "Continuous-score metrics (R_A_R, R_A_P, V_ROC, V_PR, AUC) do not depend on the threshold",
        "(except under released step d).",
        "",
        "Released-protocol steps (--released-steps; each adds one difference between the paper's",
        "text and its released code; rows are named released-<steps>[-oracle][-leak]):",
        *[f"  {st.label:<10} {st.description}" for st in STEPS.values()],
        (
            "Steps c (ORACLE) and e (LEAK) are never results of a method: they exist to measure "
            "how much"
        ),
        "the paper's numbers owe to them (benchmarks/decomposition.py adds a..e cumulatively).",
        "",
        "Lists (--dataset MSL SMAP, --embedder, --mode, --seeds) or --grid FILE make a grid: one",
        "task per (row, seed[, entity]), each written to <out>/tasks/ as soon as it finishes; a",
        "rerun skips finished tasks. Writes <out>/<dataset>_<embedder>_<mode>[_per-entity][_<tag>]",
        ".json per row, from whatever tasks have finished, and regenerates <out>/results.md.",
    ]
    parser.epilog = "\n".join(lines)
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    names = ", ".join(sorted(EMBEDDERS))
    groups = {k: parser.add_argument_group(title) for k, title in _GROUPS.items()}
    groups["what"].add_argument(
        "--grid",
        default=None,
        metavar="FILE",
        help="grid file (JSON or YAML) of settings, lists crossed; options given here override it",
    )
    defaults = BenchmarkConfig.__dataclass_fields__
    for group, flag, kwargs in FIELD_OPTIONS:
        kwargs = dict(kwargs, default=None)
        kwargs["help"] = kwargs["help"].replace("{names}", names)
        field = defaults.get(flag[2:].replace("-", "_"))
        if (
            "(default" not in kwargs["help"]
            and field is not None
            and field.default not in (None, MISSING)
        ):
            shown = (
                " ".join(map(str, field.default))
                if isinstance(field.default, tuple)
                else field.default
            )
            kwargs["help"] += f" (default: {shown})"  # the config's, so it is never restated here
        groups[group].add_argument(flag, **kwargs)
    groups["what"].add_argument(
        "--per-entity",
        action="store_true",
        default=None,
        help="train and score each channel / machine separately and report the mean over "
        "entities (default: the concatenated series, as the paper's dataset table)",
    )
    groups["what"].add_argument(
        "--no-resume",
        dest="resume",
        action="store_false",
        help="recompute tasks that already have a result in <out>/tasks/",
    )
    add_image_benchmark_arguments(parser)
    add_executor_arguments(parser)
    if not any("--quiet" in a.option_strings for a in parser._actions):
        groups["metrics"].add_argument("--quiet", action="store_true", help="no progress bars")
