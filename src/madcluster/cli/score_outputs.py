"""What ``madcluster score`` writes once it has scores, from a ``.mcz`` model or an ONNX file
alike: the scores CSV (atomically), the summary line, the metrics when the file has labels, and
the score plot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from madcluster.atomic import atomic_path
from madcluster.cli.console import print_metrics, print_note, say
from madcluster.data.scores_table import input_columns, scores_frame, write_scores_csv
from madcluster.data.table import has_pandas


def write_score_outputs(
    table: Any,
    data_path: str,
    scores: np.ndarray,
    threshold: float,
    output: str,
    plot: str | None,
    *,
    contributions: np.ndarray | None = None,
    incidents: list[tuple[int, int | None]] | None = None,
    engine: str = "",
    plot_tag: str = "",
    plot_args: Any = None,
) -> np.ndarray:
    """Write the outputs for ``scores`` of ``table`` (read from ``data_path``); ``contributions``:
    per-channel attribution of the flagged rows (the CSV's top channels, the plot's channel
    ranking); ``incidents``: ``(start, end)`` spans the plot shades; ``engine``: what scored, for the summary line; ``plot_tag``: beside the plot's title;
    ``plot_args``: the command's arguments (``--quiet``) for the note when matplotlib is missing
    (the torch-free install: the plot is skipped, the command still succeeds). Returns the 0/1
    flags."""
    from madcluster.estimator.attribution import top_channels

    predicted = (scores > threshold).astype(np.int64)
    channels = None if contributions is None else top_channels(contributions, table.columns)
    columns = input_columns(table, channels)
    with atomic_path(output) as tmp:
        if has_pandas():
            scores_frame(scores, predicted, **columns).to_csv(tmp, index_label="row")
        else:  # the torch-free install (numpy and onnxruntime only)
            write_scores_csv(tmp, scores, predicted, **columns)
    with_engine = f" with {engine}" if engine else ""
    say(
        f"scored {len(scores)} rows{with_engine}: {int(predicted.sum())} above threshold "
        f"{threshold:.6g} ({predicted.mean():.2%})"
    )
    say(f"scores written to {output}")
    if table.labels is not None:
        print_metrics(scores, table.labels, threshold)
    if plot is not None and not _has_matplotlib():
        print_note(
            plot_args,
            f"plot {plot} skipped: matplotlib is not installed (pip install matplotlib, or "
            "--plot none to say nothing); the scores CSV is complete",
        )
    elif plot is not None:
        from madcluster.viz import plot_scores

        title = f"MADCluster scores{f' ({plot_tag})' if plot_tag else ''}: {Path(data_path).name}"
        plot_scores(
            scores,
            threshold,
            table.labels,
            X=_named_values(table, data_path),
            contributions=contributions,
            incidents=incidents,
            timestamps=table.timestamps,
            title=title,
            path=plot,
        )
        say(f"plot written to {plot}")
    return predicted


def _has_matplotlib() -> bool:
    import importlib.util

    return importlib.util.find_spec("matplotlib") is not None


def _named_values(table: Any, data_path: str) -> Any:
    """The plot's channels: named columns (a DataFrame) when pandas is there, else the array."""
    from madcluster.data.columns import feature_values

    return feature_values(table, data_path) if has_pandas() else table.values
