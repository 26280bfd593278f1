"""Matplotlib figures written straight to PNG (Agg backend: no screen needed)."""

from __future__ import annotations

import os

import numpy as np

from madcluster.atomic import atomic_path


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def _label_spans(labels: np.ndarray) -> list[tuple[int, int]]:
    padded = np.concatenate([[0], np.asarray(labels, dtype=np.int8), [0]])
    edges = np.flatnonzero(np.diff(padded))
    return list(zip(edges[::2], edges[1::2]))


def plot_scores(
    path: str | os.PathLike,
    scores: np.ndarray,
    threshold: float,
    labels: np.ndarray | None = None,
    *,
    title: str = "MADCluster anomaly score",
) -> None:
    """Score per time step, the threshold line, predicted points and (if given) true anomaly spans."""
    plt = _pyplot()
    scores = np.asarray(scores, dtype=np.float64)
    fig, ax = plt.subplots(figsize=(12, 3.5), dpi=110)
    t = np.arange(len(scores))
    ax.plot(t, scores, lw=0.7, color="#1f77b4", label="score")
    ax.axhline(threshold, color="#d62728", lw=1.0, ls="--", label=f"threshold {threshold:.3g}")
    flagged = scores > threshold
    ax.scatter(t[flagged], scores[flagged], s=4, color="#d62728", zorder=3, label="predicted anomaly")
    if labels is not None:
        for i, (start, end) in enumerate(_label_spans(labels)):
            ax.axvspan(start, end, color="#ff7f0e", alpha=0.2, lw=0, label="true anomaly" if i == 0 else None)
    ax.set_xlabel("time step")
    ax.set_ylabel("anomaly score")
    ax.set_title(title)
    ax.legend(loc="upper right", fontsize=8, ncol=4)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png")
    plt.close(fig)


def plot_history(path: str | os.PathLike, history: dict[str, list[float]], *, title: str = "MADCluster training") -> None:
    """The paper's training figure (nu, R, distance, losses) plus the collapse diagnostics.

    The second row is what tells a collapsed model apart: q's mean and spread (q pinned at 1 with
    a tiny std means every step sits on the center and Eq. 4 never fires), the fraction of steps
    with p = 0, the feature spread of h, and the spread of the two score terms.
    """
    plt = _pyplot()
    epochs = history["epoch"]
    panels = [
        ("one-directed threshold nu", ["nu"]),
        ("radius R", ["radius"]),
        ("mean distance ||h - c||^2", ["mean_distance"]),
        ("loss", ["train_loss", "val_loss", "distance_loss", "cluster_loss", "base_loss"]),
        ("soft assignment q (collapse: q -> 1)", ["q_mean", "q_p50", "q_p01"]),
        ("spread (collapse: -> 0)", ["q_std", "h_spread"]),
        ("fraction of steps with p = 0", ["frac_p0"]),
        ("score-term spread (std)", ["cluster_term_std", "distance_term_std"]),
    ]
    fig, axes = plt.subplots(2, 4, figsize=(15, 6), dpi=110)
    for ax, (name, keys) in zip(axes.ravel(), panels):
        for key in keys:
            values = np.asarray(history.get(key, []), dtype=np.float64)
            if values.size and np.isfinite(values).any():
                ax.plot(epochs[: len(values)], values, marker="o", ms=3, label=key)
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("epoch")
        if name.startswith(("spread", "score-term")):
            ax.set_yscale("symlog", linthresh=1e-4)
        if len(keys) > 1:
            ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png")
    plt.close(fig)
