"""The figures that read a trained model (the paper's Fig. 3-4 style): the center's path over the
epochs in a 2-D projection of h, and sigma bands of the distance ||h - c|| over time.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.figure import Figure

from madcluster.estimator.fitted import embed
from madcluster.viz.plots import SCORE_COLOR, THRESHOLD_COLOR, save_figure, shade_spans, time_axis

if TYPE_CHECKING:
    from madcluster.estimator.detector import MADCluster

SIGMA_ALPHAS = {1: 0.35, 2: 0.22, 3: 0.12}


def _named_models(
    models: MADCluster | Mapping[str, MADCluster] | Sequence[MADCluster],
) -> list[tuple[str, MADCluster]]:
    """(name, model) pairs; unnamed models are called after their embedder and mode."""
    if isinstance(models, Mapping):
        return [(str(k), v) for k, v in models.items()]
    if isinstance(models, Sequence) and not isinstance(models, (str, bytes)):
        return [(_model_name(m), m) for m in models]
    return [(_model_name(models), models)]


def _model_name(model: MADCluster) -> str:
    embedder = model.embedder if isinstance(model.embedder, str) else type(model.embedder).__name__
    return (
        f"{embedder} alone"
        if model.mode == "base-only"
        else f"{embedder} + MADCluster ({model.mode})"
    )


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
        raise ValueError(f"labels has {len(labels)} values for {n} time steps")
    normal = labels == 0
    return normal if normal.any() else np.ones(n, dtype=bool)


def projection_method(method: str = "auto") -> str:
    """``umap`` when requested or available (``auto``), else ``pca``; UMAP needs the ``viz``
    extra."""
    if method not in ("auto", "umap", "pca"):
        raise ValueError(f"unknown projection {method!r}; choose auto, umap or pca")
    if method == "pca":
        return "pca"
    try:
        import umap  # noqa: F401
    except ImportError:
        if method == "umap":
            raise ImportError(
                "projection='umap' needs umap-learn: pip install 'madcluster[viz]'"
            ) from None
        return "pca"
    return "umap"


def project_2d(
    points: np.ndarray, extra: np.ndarray, *, method: str = "auto", random_state: int = 0
) -> tuple[np.ndarray, np.ndarray, str]:
    """Fit a 2-D projection on ``points`` and apply it to ``extra`` (the centers).

    Returns both projections and the name of the method used, so the figure can say which.
    """
    chosen = projection_method(method)
    if chosen == "umap":
        import umap

        reducer = umap.UMAP(
            n_components=2, random_state=random_state, n_neighbors=min(15, len(points) - 1)
        )
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
        h = embed(model.model_, X)
        normal = _normal_mask(labels, len(h))
        idx = _subsample(normal, max_points, rng)
        centers, center_kind = _centers(model, h, normal)
        path_rows = getattr(model, "center_path_", None)
        k = centers.shape[0]
        trail = (
            np.asarray(path_rows, dtype=np.float64).reshape(-1, k, h.shape[1])
            if path_rows is not None
            else np.empty((0, k, h.shape[1]))
        )
        extra = np.concatenate([trail.reshape(-1, h.shape[1]), centers])
        pts, ext, used_method = project_2d(h[idx], extra, method=method, random_state=random_state)
        used.add(used_method)
        is_normal = normal[idx]
        ax.scatter(
            pts[is_normal, 0],
            pts[is_normal, 1],
            s=3,
            color="#7f7f7f",
            alpha=0.35,
            lw=0,
            label="normal steps",
        )
        if labels is not None and (~is_normal).any():
            ax.scatter(
                pts[~is_normal, 0],
                pts[~is_normal, 1],
                s=5,
                color=THRESHOLD_COLOR,
                alpha=0.6,
                lw=0,
                label="anomalous steps",
            )
        trail_2d = ext[: trail.shape[0] * k].reshape(trail.shape[0], k, 2)
        for j in range(k):
            if len(trail_2d) > 1:
                ax.plot(
                    trail_2d[:, j, 0],
                    trail_2d[:, j, 1],
                    color="#1f3b73",
                    lw=1.0,
                    alpha=0.8,
                    label="center path (per epoch)" if j == 0 else None,
                )
                ax.scatter(
                    trail_2d[:, j, 0],
                    trail_2d[:, j, 1],
                    c=np.arange(len(trail_2d)),
                    cmap="viridis",
                    s=18,
                    zorder=4,
                )
            if len(trail_2d):
                ax.scatter(
                    *trail_2d[0, j],
                    marker="o",
                    s=60,
                    facecolor="none",
                    edgecolor="black",
                    zorder=5,
                    label="initial c" if j == 0 else None,
                )
        final = ext[trail.shape[0] * k :]
        ax.scatter(
            final[:, 0],
            final[:, 1],
            marker="*",
            s=180,
            color="gold",
            edgecolor="black",
            zorder=6,
            label="final c" if center_kind == "learned c" else center_kind,
        )
        ax.set_title(
            f"{name}" + (f"  ({len(trail_2d) - 1} epochs of c)" if len(trail_2d) > 1 else ""),
            fontsize=9,
        )
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
    keep_a = (
        anomalous
        if len(anomalous) <= max_points // 2
        else rng.choice(anomalous, max_points // 2, replace=False)
    )
    keep_n = rng.choice(rest, min(len(rest), max_points - len(keep_a)), replace=False)
    return np.sort(np.concatenate([keep_a, keep_n]))


def distance_to_center(
    model: MADCluster, X: Any, labels: np.ndarray | None = None
) -> tuple[np.ndarray, str]:
    """||h_t - c|| per step of ``X`` (the nearest center when k > 1), and what c is."""
    h = embed(model.model_, X)
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
    fig = Figure(figsize=(13.5, 0.6 + 2.8 * len(pairs)), dpi=110)
    axes = fig.subplots(len(pairs), 1, squeeze=False, sharex=True)[:, 0]
    x = None
    for ax, (name, model) in zip(axes, pairs):
        d, kind = distance_to_center(model, X, labels)
        normal = _normal_mask(labels, len(d))
        x, xlabel = time_axis(len(d), timestamps)
        mean, std = float(d[normal].mean()), float(d[normal].std())
        for k in (3, 2, 1):
            ax.axhspan(
                mean - k * std,
                mean + k * std,
                color=SCORE_COLOR,
                alpha=SIGMA_ALPHAS[k],
                lw=0,
                label=f"mean ± {k}σ (normal)",
            )
        ax.axhline(mean, color=SCORE_COLOR, lw=0.8)
        shade_spans(ax, x, labels)
        ax.plot(x, d, lw=0.6, color="black", label="||h - c||")
        outside = d > mean + 3 * std
        ax.scatter(x[outside], d[outside], s=4, color=THRESHOLD_COLOR, zorder=3, label="beyond 3σ")
        radius = getattr(model.net_.head, "radius", None)
        if radius is not None and float(radius) > 0:
            ax.axhline(
                float(radius), color="#2ca02c", ls="--", lw=1.0, label=f"R = {float(radius):.3g}"
            )
        share = float(np.mean(outside[~normal])) if (~normal).any() else float("nan")
        ax.set_title(f"{name}: c = {kind}; anomalous steps beyond 3σ: {share:.1%}", fontsize=9)
        ax.set_ylabel("||h - c||")
        # beside the axes, not on them: inside, it covered the peaks it describes
        ax.legend(loc="upper left", bbox_to_anchor=(1.005, 1.0), borderaxespad=0.0, fontsize=7)
        ax.set_xlabel(xlabel)
    if x is not None and np.issubdtype(np.asarray(x).dtype, np.datetime64):
        fig.autofmt_xdate()
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return save_figure(fig, path)
