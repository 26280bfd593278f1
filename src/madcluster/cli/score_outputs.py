"""What ``madcluster score`` writes once it has scores, from a ``.mcz`` model or an ONNX file
alike: the scores CSV (atomically), the summary line, the metrics when the file has labels, and
the score plot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from madcluster.atomic import atomic_path
from madcluster.cli.console import print_metrics, say
from madcluster.data.columns import feature_values
from madcluster.data.scores_table import scores_frame


def write_score_outputs(
    table: Any, data_path: str, scores: np.ndarray, threshold: float, output: str, plot: str | None, *,
    contributions: np.ndarray | None = None, engine: str = "", plot_tag: str = "",
) -> np.ndarray:
    """Write the outputs for ``scores`` of ``table`` (read from ``data_path``); ``contributions``:
    per-channel attribution of the flagged rows (the CSV's top channels, the plot's channel
    ranking); ``engine``: what scored, for the summary line; ``plot_tag``: beside the plot's title.
    Returns the 0/1 flags."""
    from madcluster.estimator.attribution import top_channels

    predicted = (scores > threshold).astype(np.int64)
    frame = scores_frame(
        scores, predicted, labels=table.labels, timestamp_column=table.timestamp_column,
        timestamps=table.timestamps,
        top_channels=None if contributions is None else top_channels(contributions, table.columns),
    )
    with atomic_path(output) as tmp:
        frame.to_csv(tmp, index_label="row")
    with_engine = f" with {engine}" if engine else ""
    say(
        f"scored {len(scores)} rows{with_engine}: {int(predicted.sum())} above threshold {threshold:.6g} "
        f"({predicted.mean():.2%})"
    )
    say(f"scores written to {output}")
    if table.labels is not None:
        print_metrics(scores, table.labels, threshold)
    if plot is not None:
        from madcluster.viz import plot_scores

        title = f"MADCluster scores{f' ({plot_tag})' if plot_tag else ''}: {Path(data_path).name}"
        plot_scores(scores, threshold, table.labels, X=feature_values(table, data_path), contributions=contributions,
                    timestamps=table.timestamps, title=title, path=plot)
        say(f"plot written to {plot}")
    return predicted
