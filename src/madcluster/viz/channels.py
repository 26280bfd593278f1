"""Which input channels a score plot shows: those behind the score where it is high."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def top_deviating_channels(X: np.ndarray, focus: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` channels that deviate most on the ``focus`` steps.

    Each channel is put on a robust scale (median, MAD), then ranked by its mean |z| over the
    focus steps. Used when no attribution is available: a deviating channel is not always the one
    the model reacts to (a broken correlation deviates in no single channel).
    """
    median = np.median(X, axis=0)
    mad = 1.4826 * np.median(np.abs(X - median), axis=0)
    scale = np.where(mad > 1e-12, mad, X.std(axis=0))
    z = np.abs(X - median) / np.where(scale > 1e-12, scale, 1.0)
    rows = z[focus] if focus.any() else z
    order = np.argsort(-rows.mean(axis=0), kind="stable")
    return order[: max(1, min(k, X.shape[1]))]


def channels_to_show(
    X: np.ndarray, focus: np.ndarray, k: int, contributions: np.ndarray | None
) -> tuple[list[tuple[int, Callable[[str], str]]], str]:
    """``([(channel, label maker), ...], panel caption)``: by contribution when given, else by
    deviation. A label shows the channel's share of the positive contribution on the focus steps."""
    if contributions is None:
        picked = top_deviating_channels(X, focus, k)
        caption = f"input: the {len(picked)} channels deviating most where the score is high"
        return [(int(j), str) for j in picked], caption
    rows = contributions[focus] if focus.any() else contributions
    mean = np.clip(rows.mean(axis=0), 0.0, None)
    total = mean.sum()
    order = np.argsort(-mean, kind="stable")[: max(1, min(k, X.shape[1]))]
    caption = (
        f"input: the {len(order)} channels contributing most to the score where it is high "
        "(share of the positive attribution: score drop when held at its mean, plus deviation, "
        "each against training)"
    )

    def labeller(j: int) -> Callable[[str], str]:
        share = mean[j] / total if total > 0 else 0.0
        return lambda name: f"{name}\n{share:.0%}"

    return [(int(j), labeller(int(j))) for j in order], caption
