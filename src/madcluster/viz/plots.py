"""The paper's figures for any trained model, as matplotlib Figures.

Every function returns the :class:`~matplotlib.figure.Figure` (a notebook shows it as is) and, given
``path``, also writes it as a PNG atomically (a crash never leaves half an image). Figures are built
with ``matplotlib.figure.Figure`` rather than pyplot, so no backend is switched, nothing global
changes, and a figure is freed as soon as the caller drops it.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.figure import Figure

from madcluster.atomic import atomic_path
from madcluster.method.diagnostics import collapse_diagnosis
from madcluster.viz.channels import channels_to_show

if TYPE_CHECKING:
    from matplotlib.axes import Axes

ANOMALY_COLOR = "#ff7f0e"
SCORE_COLOR = "#1f77b4"
THRESHOLD_COLOR = "#d62728"
INCIDENT_COLOR = "#9467bd"  # the incidents band (MADCluster.incidents)


# ------------------------------------------------------------------------------------- helpers
def save_figure(fig: Figure, path: str | os.PathLike | None) -> Figure:
    """Write ``fig`` to ``path`` as PNG atomically (nothing when ``path`` is None); return it."""
    if path is not None:
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format="png")
    return fig


def _label_spans(labels: np.ndarray) -> list[tuple[int, int]]:
    """Half-open [start, end) index ranges where ``labels`` is nonzero."""
    padded = np.concatenate([[0], (np.asarray(labels) != 0).astype(np.int8), [0]])
    edges = np.flatnonzero(np.diff(padded))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2])]


def time_axis(n: int, timestamps: Any) -> tuple[np.ndarray, str]:
    """The x values of ``n`` steps: the timestamps when given (parsed to datetimes where they are
    dates), else the step index; and the axis label."""
    if timestamps is None:
        return np.arange(n), "time step"
    import pandas as pd

    values = np.asarray(timestamps)
    if len(values) != n:
        raise ValueError(f"timestamps has {len(values)} values for {n} time steps")
    if np.issubdtype(values.dtype, np.number):
        return values, "time"
    parsed = pd.to_datetime(pd.Series(values), errors="coerce")
    if parsed.isna().any():
        return np.arange(n), "time step (timestamps not readable as dates)"
    return parsed.to_numpy(), "time"


#: The narrowest shaded span, as a fraction of the x range: a labelled one-row anomaly in 10,000
#: rows is a 0.01% band, invisible, and its flagged dots read as false alarms.
MIN_SPAN_FRACTION = 0.004


def shade_spans(ax: Axes, x: np.ndarray, labels: np.ndarray | None, *, legend: bool = True) -> None:
    """Shade the true anomalous spans (labels != 0) on ``ax``; the first one gets a legend entry.
    Spans narrower than :data:`MIN_SPAN_FRACTION` of the axis are widened around their centre
    and outlined, so a labelled one-row anomaly stays visible."""
    if labels is None:
        return
    x = np.asarray(x)
    numeric = (
        x.astype("datetime64[ns]").astype(np.int64).astype(np.float64)
        if np.issubdtype(x.dtype, np.datetime64)
        else x.astype(np.float64)
    )
    least = MIN_SPAN_FRACTION * float(numeric[-1] - numeric[0]) if len(x) > 1 else 0.0
    for i, (start, end) in enumerate(_label_spans(labels)):
        left, right = numeric[start], numeric[end] if end < len(x) else numeric[-1]
        narrow = right - left < least
        if narrow:
            middle = (left + right) / 2
            left, right = middle - least / 2, middle + least / 2
        left, right = _from_numeric(left, x), _from_numeric(right, x)
        ax.axvspan(
            left,
            right,
            color=ANOMALY_COLOR,
            alpha=0.35 if narrow else 0.2,
            lw=0.8 if narrow else 0,
            ec=ANOMALY_COLOR if narrow else None,
            label="true anomaly" if legend and i == 0 else None,
        )


def _from_numeric(value: float, like: np.ndarray) -> Any:
    """A position computed in floats, back in the axis' units (datetimes stay datetimes)."""
    if np.issubdtype(like.dtype, np.datetime64):
        return np.datetime64(int(value), "ns")
    return value


def _frame_parts(X: Any) -> tuple[np.ndarray, list[str], Any]:
    """Values, channel names and (for a DataFrame with a DatetimeIndex) timestamps of ``X``."""
    import pandas as pd

    if isinstance(X, pd.DataFrame):
        stamps = X.index if isinstance(X.index, pd.DatetimeIndex) else None
        return X.to_numpy(dtype=np.float64), [str(c) for c in X.columns], stamps
    values = np.asarray(X, dtype=np.float64)
    if values.ndim == 1:
        values = values[:, None]
    return values, [f"channel {j}" for j in range(values.shape[1])], None


# ---------------------------------------------------------------------------------- score plot
CAPTION_CHARS = 130  # a caption line that fits the 12-inch figure at 9 pt
LOG_AXIS_RATIO = 20.0  # scores above this many times the threshold's scale put the axis on symlog


def score_axis_break(scores: np.ndarray, threshold: float | None) -> float | None:
    """Where the score axis turns logarithmic (symlog), or None for a linear axis: when the top
    score is over :data:`LOG_AXIS_RATIO` times the threshold (or the 99th percentile without one),
    a linear axis squeezes everything around the threshold into a flat line."""
    finite = scores[np.isfinite(scores)]
    if not len(finite):
        return None
    scale = (
        abs(threshold)
        if threshold is not None and threshold != 0
        else float(np.quantile(np.abs(finite), 0.99))
    )
    if scale <= 0 or np.abs(finite).max() <= LOG_AXIS_RATIO * scale:
        return None
    return float(scale)


def plot_scores(
    scores: np.ndarray,
    threshold: float | None = None,
    labels: np.ndarray | None = None,
    *,
    X: Any = None,
    timestamps: Any = None,
    top_k: int = 5,
    contributions: np.ndarray | None = None,
    incidents: Sequence[tuple[int, int | None]] | None = None,
    title: str = "MADCluster anomaly score",
    path: str | os.PathLike | None = None,
) -> Figure:
    """Score per time step with the threshold, predicted points and true anomaly spans;
    ``incidents`` (``(start, end)`` rows, end None while open: ``MADCluster.incidents``) shaded in
    a band along the score's foot.

    With ``X`` (the scored input, array or DataFrame) ``top_k`` input channels are drawn above the
    score, so a flagged step can be traced to the channels behind it: with ``contributions``
    (``MADCluster.explain(X)``) those contributing most to the score where it is above the
    threshold (or in its top 1% without one), each labelled with its share; without, those
    deviating most there. ``timestamps`` (or a
    DataFrame's DatetimeIndex) become the x-axis.
    """
    scores = np.asarray(scores, dtype=np.float64).ravel()
    n = len(scores)
    channels: list[tuple[str, np.ndarray]] = []
    if X is not None:
        values, names, stamps = _frame_parts(X)
        if len(values) != n:
            raise ValueError(f"X has {len(values)} rows for {n} scores")
        timestamps = stamps if timestamps is None else timestamps
        if threshold is not None and np.any(scores > threshold):
            focus = scores > threshold
        else:
            focus = scores >= np.quantile(scores, 0.99)
        picked, caption = channels_to_show(values, focus, top_k, contributions)
        channels = [(label(names[j]), values[:, j]) for j, label in picked]
    x, xlabel = time_axis(n, timestamps)

    heights = [0.9] * len(channels) + [2.6]
    fig = Figure(figsize=(12, 1.0 + sum(heights)), dpi=110)
    axes = fig.subplots(
        len(heights), 1, sharex=True, squeeze=False, gridspec_kw={"height_ratios": heights}
    )[:, 0]
    for ax, (name, series) in zip(axes, channels):
        ax.plot(x, series, lw=0.6, color="#555555")
        shade_spans(ax, x, labels, legend=False)
        ax.set_ylabel(name, rotation=0, ha="right", va="center", fontsize=8)
        ax.tick_params(labelsize=7)
    if channels:
        axes[0].set_title(textwrap.fill(caption, CAPTION_CHARS), fontsize=9, loc="left")
    ax = axes[-1]
    ax.plot(x, scores, lw=0.7, color=SCORE_COLOR, label="score")
    linear_up_to = score_axis_break(scores, threshold)
    if linear_up_to is not None:  # a few huge scores would flatten the threshold's neighbourhood
        ax.set_yscale("symlog", linthresh=linear_up_to, linscale=2.0)
    if threshold is not None:
        ax.axhline(
            threshold, color=THRESHOLD_COLOR, lw=1.0, ls="--", label=f"threshold {threshold:.3g}"
        )
        flagged = scores > threshold
        ax.scatter(
            x[flagged],
            scores[flagged],
            s=4,
            color=THRESHOLD_COLOR,
            zorder=3,
            label="predicted anomaly",
        )
    shade_spans(ax, x, labels)
    for i, (start, end) in enumerate(incidents or ()):
        right = x[n - 1 if end is None else min(int(end), n - 1)]
        name = "incident" if i == 0 else None
        ax.axvspan(x[int(start)], right, ymax=0.06, color=INCIDENT_COLOR, lw=0, label=name)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(
        "anomaly score"
        if linear_up_to is None
        else f"anomaly score\n(log above {linear_up_to:.3g})"
    )
    ax.legend(loc="upper right", fontsize=8, ncol=4)
    fig.suptitle(title, fontsize=10)
    if np.issubdtype(np.asarray(x).dtype, np.datetime64):
        fig.autofmt_xdate()
    fig.tight_layout()
    return save_figure(fig, path)


# ------------------------------------------------------------------------------- training curves
HISTORY_PANELS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("one-directed threshold nu", ("nu",)),
    ("radius R", ("radius",)),
    ("mean distance ||h - c||^2", ("mean_distance",)),
    ("loss", ("train_loss", "val_loss", "distance_loss", "cluster_loss", "base_loss")),
    ("soft assignment q (rises toward 1 by design)", ("q_mean", "q_p50", "q_p01")),
    ("spread (shrinks by design; ~0 = collapse)", ("q_std", "h_spread")),
    ("fraction of steps with p = 0", ("frac_p0",)),
    ("score-term spread (std)", ("cluster_term_std", "distance_term_std")),
)


def plot_history(
    history: Mapping[str, Sequence[float]],
    *,
    title: str = "MADCluster training",
    path: str | os.PathLike | None = None,
) -> Figure:
    """The paper's training figure (nu, R, distance, losses) plus the collapse diagnostics.

    The second row shows q, the spreads of q and h, the fraction of steps with p = 0 and the
    spread of the two score terms. In a healthy default run q rises toward 1 and the spreads
    shrink (by design); the subtitle says "COLLAPSED" (in red) only when
    :func:`~madcluster.method.diagnostics.collapse_diagnosis` finds h's spread gone.
    """
    epochs = list(history["epoch"])
    fig = Figure(figsize=(15, 6), dpi=110)
    axes = fig.subplots(2, 4)
    for ax, (name, keys) in zip(axes.ravel(), HISTORY_PANELS):
        drawn = []
        for key in keys:
            values = np.asarray(history.get(key, []), dtype=np.float64)
            if values.size and np.isfinite(values).any():
                ax.plot(epochs[: len(values)], values, marker="o", ms=3, label=key)
                drawn.append(values[np.isfinite(values)])
        # a flat line says nothing: say its value
        if len(drawn) == 1 and len(epochs) > 1 and np.ptp(drawn[0]) == 0:
            ax.lines[0].remove()
            ax.text(
                0.5,
                0.5,
                f"{drawn[0][0]:.3g} in every epoch\n(no change to show)",
                transform=ax.transAxes,
                ha="center",
                va="center",
                fontsize=9,
                color="#555555",
            )
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("epoch")
        if name.startswith(("spread", "score-term")):
            ax.set_yscale("symlog", linthresh=1e-4)
        if len(keys) > 1 and ax.lines:
            ax.legend(fontsize=7)
    collapsed, verdict = collapse_diagnosis(history)
    fig.suptitle(f"{title}\n{verdict}", fontsize=9, color="#d62728" if collapsed else "black")
    fig.tight_layout()
    return save_figure(fig, path)
