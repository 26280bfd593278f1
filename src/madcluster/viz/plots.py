"""The paper's figures for any trained model, as matplotlib Figures.

Every function returns the :class:`~matplotlib.figure.Figure` (a notebook shows it as is) and, given
``path``, also writes it as a PNG atomically (a crash never leaves half an image). Figures are built
with ``matplotlib.figure.Figure`` rather than pyplot, so no backend is switched, nothing global
changes, and a figure is freed as soon as the caller drops it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.figure import Figure

from madcluster.atomic import atomic_path
from madcluster.exceptions import ParameterError
from madcluster.method.diagnostics import collapse_diagnosis
from madcluster.viz.channels import channels_to_show

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from madcluster.detector import MADCluster

ANOMALY_COLOR = "#ff7f0e"
SCORE_COLOR = "#1f77b4"
THRESHOLD_COLOR = "#d62728"
SIGMA_ALPHAS = {1: 0.35, 2: 0.22, 3: 0.12}


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


def _time_axis(n: int, timestamps: Any) -> tuple[np.ndarray, str]:
    """The x values of ``n`` steps: the timestamps when given (parsed to datetimes where they are
    dates), else the step index; and the axis label."""
    if timestamps is None:
        return np.arange(n), "time step"
    import pandas as pd

    values = np.asarray(timestamps)
    if len(values) != n:
        raise ParameterError(f"timestamps has {len(values)} values for {n} time steps")
    if np.issubdtype(values.dtype, np.number):
        return values, "time"
    parsed = pd.to_datetime(pd.Series(values), errors="coerce")
    if parsed.isna().any():
        return np.arange(n), "time step (timestamps not readable as dates)"
    return parsed.to_numpy(), "time"


def _shade_spans(ax: Axes, x: np.ndarray, labels: np.ndarray | None, *, legend: bool = True) -> None:
    """Shade the true anomalous spans (labels != 0) on ``ax``; the first one gets a legend entry."""
    if labels is None:
        return
    for i, (start, end) in enumerate(_label_spans(labels)):
        right = x[end] if end < len(x) else x[-1]
        ax.axvspan(x[start], right, color=ANOMALY_COLOR, alpha=0.2, lw=0,
                   label="true anomaly" if legend and i == 0 else None)


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
def plot_scores(
    scores: np.ndarray,
    threshold: float | None = None,
    labels: np.ndarray | None = None,
    *,
    X: Any = None,
    timestamps: Any = None,
    top_k: int = 5,
    contributions: np.ndarray | None = None,
    title: str = "MADCluster anomaly score",
    path: str | os.PathLike | None = None,
) -> Figure:
    """Score per time step with the threshold, predicted points and true anomaly spans.

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
            raise ParameterError(f"X has {len(values)} rows for {n} scores")
        timestamps = stamps if timestamps is None else timestamps
        if threshold is not None and np.any(scores > threshold):
            focus = scores > threshold
        else:
            focus = scores >= np.quantile(scores, 0.99)
        picked, caption = channels_to_show(values, focus, top_k, contributions)
        channels = [(label(names[j]), values[:, j]) for j, label in picked]
    x, xlabel = _time_axis(n, timestamps)

    heights = [0.9] * len(channels) + [2.6]
    fig = Figure(figsize=(12, 1.0 + sum(heights)), dpi=110)
    axes = fig.subplots(len(heights), 1, sharex=True, squeeze=False,
                        gridspec_kw={"height_ratios": heights})[:, 0]
    for ax, (name, series) in zip(axes, channels):
        ax.plot(x, series, lw=0.6, color="#555555")
        _shade_spans(ax, x, labels, legend=False)
        ax.set_ylabel(name, rotation=0, ha="right", va="center", fontsize=8)
        ax.tick_params(labelsize=7)
    if channels:
        axes[0].set_title(caption, fontsize=9, loc="left")
    ax = axes[-1]
    ax.plot(x, scores, lw=0.7, color=SCORE_COLOR, label="score")
    if threshold is not None:
        ax.axhline(threshold, color=THRESHOLD_COLOR, lw=1.0, ls="--", label=f"threshold {threshold:.3g}")
        flagged = scores > threshold
        ax.scatter(x[flagged], scores[flagged], s=4, color=THRESHOLD_COLOR, zorder=3,
                   label="predicted anomaly")
    _shade_spans(ax, x, labels)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("anomaly score")
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
        for key in keys:
            values = np.asarray(history.get(key, []), dtype=np.float64)
            if values.size and np.isfinite(values).any():
                ax.plot(epochs[: len(values)], values, marker="o", ms=3, label=key)
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


# ------------------------------------------------------------------------- model-based figures
def _named_models(models: MADCluster | Mapping[str, MADCluster] | Sequence[MADCluster]) -> list[tuple[str, MADCluster]]:
    """(name, model) pairs; unnamed models are called after their embedder and mode."""
    if isinstance(models, Mapping):
        return [(str(k), v) for k, v in models.items()]
    if isinstance(models, Sequence) and not isinstance(models, (str, bytes)):
        return [(_model_name(m), m) for m in models]
    return [(_model_name(models), models)]


def _model_name(model: MADCluster) -> str:
    embedder = model.embedder if isinstance(model.embedder, str) else type(model.embedder).__name__
    return f"{embedder} alone" if model.mode == "base-only" else f"{embedder} + MADCluster ({model.mode})"


def _centers(model: MADCluster, h: np.ndarray, normal: np.ndarray) -> tuple[np.ndarray, str]:
    """The learned center(s) ``[k, f]``; for a model without a head (base-only), the mean of h over
    the normal steps, which is where a fixed-center method (DeepSVDD) would put c."""
    head = model.net_.head
    center = getattr(head, "center", getattr(head, "centers", None))
    if center is not None:
        return center.detach().cpu().numpy().astype(np.float64).reshape(-1, h.shape[1]), "learned c"
    return h[normal].mean(axis=0, keepdims=True), "mean of h on normal steps (no learned c)"


def _normal_mask(labels: np.ndarray | None, n: int) -> np.ndarray:
    if labels is None:
        return np.ones(n, dtype=bool)
    labels = np.asarray(labels).ravel()
    if len(labels) != n:
        raise ParameterError(f"labels has {len(labels)} values for {n} time steps")
    normal = labels == 0
    return normal if normal.any() else np.ones(n, dtype=bool)


def projection_method(method: str = "auto") -> str:
    """``umap`` when requested or available (``auto``), else ``pca``; UMAP needs the ``viz`` extra."""
    if method not in ("auto", "umap", "pca"):
        raise ParameterError(f"unknown projection {method!r}; choose auto, umap or pca")
    if method == "pca":
        return "pca"
    try:
        import umap  # noqa: F401
    except ImportError:
        if method == "umap":
            raise ImportError("projection='umap' needs umap-learn: pip install 'madcluster[viz]'") from None
        return "pca"
    return "umap"


def project_2d(points: np.ndarray, extra: np.ndarray, *, method: str = "auto", random_state: int = 0) -> tuple[np.ndarray, np.ndarray, str]:
    """Fit a 2-D projection on ``points`` and apply it to ``extra`` (the centers).

    Returns both projections and the name of the method used, so the figure can say which.
    """
    chosen = projection_method(method)
    if chosen == "umap":
        import umap

        reducer = umap.UMAP(n_components=2, random_state=random_state, n_neighbors=min(15, len(points) - 1))
        return reducer.fit_transform(points), reducer.transform(extra), "UMAP"
    from sklearn.decomposition import PCA

    pca = PCA(n_components=min(2, points.shape[1]), random_state=random_state).fit(points)
    a, b = pca.transform(points), pca.transform(extra)
    if a.shape[1] == 1:  # one feature: a flat second axis
        a, b = np.hstack([a, np.zeros_like(a)]), np.hstack([b, np.zeros_like(b)])
    return a, b, "PCA"


def plot_embedding(
    models: MADCluster | Mapping[str, MADCluster] | Sequence[MADCluster],
    X: Any,
    labels: np.ndarray | None = None,
    *,
    method: str = "auto",
    max_points: int = 4000,
    random_state: int = 0,
    title: str | None = None,
    path: str | os.PathLike | None = None,
) -> Figure:
    """The paper's center-path figure: a 2-D projection of h for normal and anomalous steps of
    ``X``, with the center's path over the epochs (``center_path_``) drawn on it; one panel per
    model, e.g. ``{"alone": base_only_model, "+ MADCluster": full_model}``.

    ``method``: ``auto`` uses UMAP (the paper's choice) when umap-learn is installed and PCA
    otherwise; the title says which. At most ``max_points`` steps are projected (a random subset,
    every anomalous step kept first) so the figure stays quick on long series.
    """
    pairs = _named_models(models)
    fig = Figure(figsize=(6.2 * len(pairs), 5.4), dpi=110)
    axes = fig.subplots(1, len(pairs), squeeze=False)[0]
    rng = np.random.default_rng(random_state)
    used = set()
    for ax, (name, model) in zip(axes, pairs):
        h = model.embed(X)
        normal = _normal_mask(labels, len(h))
        idx = _subsample(normal, max_points, rng)
        centers, center_kind = _centers(model, h, normal)
        path_rows = getattr(model, "center_path_", None)
        k = centers.shape[0]
        trail = np.asarray(path_rows, dtype=np.float64).reshape(-1, k, h.shape[1]) if path_rows is not None else np.empty((0, k, h.shape[1]))
        extra = np.concatenate([trail.reshape(-1, h.shape[1]), centers])
        pts, ext, used_method = project_2d(h[idx], extra, method=method, random_state=random_state)
        used.add(used_method)
        is_normal = normal[idx]
        ax.scatter(pts[is_normal, 0], pts[is_normal, 1], s=3, color="#7f7f7f", alpha=0.35, lw=0, label="normal steps")
        if labels is not None and (~is_normal).any():
            ax.scatter(pts[~is_normal, 0], pts[~is_normal, 1], s=5, color=THRESHOLD_COLOR, alpha=0.6, lw=0, label="anomalous steps")
        trail_2d = ext[: trail.shape[0] * k].reshape(trail.shape[0], k, 2)
        for j in range(k):
            if len(trail_2d) > 1:
                ax.plot(trail_2d[:, j, 0], trail_2d[:, j, 1], color="#1f3b73", lw=1.0, alpha=0.8,
                        label="center path (per epoch)" if j == 0 else None)
                ax.scatter(trail_2d[:, j, 0], trail_2d[:, j, 1], c=np.arange(len(trail_2d)), cmap="viridis", s=18, zorder=4)
            if len(trail_2d):
                ax.scatter(*trail_2d[0, j], marker="o", s=60, facecolor="none", edgecolor="black", zorder=5,
                           label="initial c" if j == 0 else None)
        final = ext[trail.shape[0] * k :]
        ax.scatter(final[:, 0], final[:, 1], marker="*", s=180, color="gold", edgecolor="black", zorder=6,
                   label="final c" if center_kind == "learned c" else center_kind)
        ax.set_title(f"{name}" + (f"  ({len(trail_2d) - 1} epochs of c)" if len(trail_2d) > 1 else ""), fontsize=9)
        ax.set_xlabel(f"{used_method} 1")
        ax.set_ylabel(f"{used_method} 2")
        ax.legend(fontsize=7, loc="best")
    projection = "/".join(sorted(used))
    if "PCA" in used and method == "auto":
        projection += " (umap-learn not installed)"
    fig.suptitle(title or f"Features h and the center's path, {projection} projection", fontsize=10)
    fig.tight_layout()
    return save_figure(fig, path)


def _subsample(normal: np.ndarray, max_points: int, rng: np.random.Generator) -> np.ndarray:
    """Sorted indices of at most ``max_points`` steps, anomalous steps first in line."""
    anomalous = np.flatnonzero(~normal)
    rest = np.flatnonzero(normal)
    if len(anomalous) + len(rest) <= max_points:
        return np.arange(len(normal))
    keep_a = anomalous if len(anomalous) <= max_points // 2 else rng.choice(anomalous, max_points // 2, replace=False)
    keep_n = rng.choice(rest, min(len(rest), max_points - len(keep_a)), replace=False)
    return np.sort(np.concatenate([keep_a, keep_n]))


def distance_to_center(model: MADCluster, X: Any, labels: np.ndarray | None = None) -> tuple[np.ndarray, str]:
    """||h_t - c|| per step of ``X`` (the nearest center when k > 1), and what c is."""
    h = model.embed(X)
    centers, kind = _centers(model, h, _normal_mask(labels, len(h)))
    d2 = ((h[:, None, :] - centers[None, :, :]) ** 2).sum(-1).min(axis=1)
    return np.sqrt(d2), kind


def plot_distance_bands(
    models: MADCluster | Mapping[str, MADCluster] | Sequence[MADCluster],
    X: Any,
    labels: np.ndarray | None = None,
    *,
    timestamps: Any = None,
    title: str = "Distance to the center ||h - c|| with sigma bands of the normal steps",
    path: str | os.PathLike | None = None,
) -> Figure:
    """The paper's sigma-band figure: ||h_t - c|| per time step, the mean +- 1/2/3 sigma of the
    normal steps (label 0; every step without labels) as bands, true anomalous spans shaded.

    A model whose anomalies rise above the 3-sigma band separates them; one whose normal and
    anomalous steps share the bands (a collapsed sphere) does not. One row per model.
    """
    pairs = _named_models(models)
    fig = Figure(figsize=(12, 0.6 + 2.8 * len(pairs)), dpi=110)
    axes = fig.subplots(len(pairs), 1, squeeze=False, sharex=True)[:, 0]
    x = None
    for ax, (name, model) in zip(axes, pairs):
        d, kind = distance_to_center(model, X, labels)
        normal = _normal_mask(labels, len(d))
        x, xlabel = _time_axis(len(d), timestamps)
        mean, std = float(d[normal].mean()), float(d[normal].std())
        for k in (3, 2, 1):
            ax.axhspan(mean - k * std, mean + k * std, color=SCORE_COLOR, alpha=SIGMA_ALPHAS[k], lw=0,
                       label=f"mean ± {k}σ (normal)")
        ax.axhline(mean, color=SCORE_COLOR, lw=0.8)
        _shade_spans(ax, x, labels)
        ax.plot(x, d, lw=0.6, color="black", label="||h - c||")
        outside = d > mean + 3 * std
        ax.scatter(x[outside], d[outside], s=4, color=THRESHOLD_COLOR, zorder=3, label="beyond 3σ")
        radius = getattr(model.net_.head, "radius", None)
        if radius is not None and float(radius) > 0:
            ax.axhline(float(radius), color="#2ca02c", ls="--", lw=1.0, label=f"R = {float(radius):.3g}")
        share = float(np.mean(outside[~normal])) if (~normal).any() else float("nan")
        ax.set_title(f"{name}: c = {kind}; anomalous steps beyond 3σ: {share:.1%}", fontsize=9)
        ax.set_ylabel("||h - c||")
        ax.legend(loc="upper right", fontsize=7, ncol=4)
        ax.set_xlabel(xlabel)
    if x is not None and np.issubdtype(np.asarray(x).dtype, np.datetime64):
        fig.autofmt_xdate()
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return save_figure(fig, path)
