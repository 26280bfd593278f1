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
    deviation.

    With contributions, channels are ranked first by on how many focus rows each is the top
    contributor, then by its mean positive contribution there (each row clipped at 0 before the
    mean). Ranking by the mean over all flagged rows alone hid the channel behind a short anomaly
    when a longer one dominated the mean: it is the top channel of its own rows, so it is shown.
    A label says on how many rows the channel is the top one and its share of the positive
    attribution.
    """
    if contributions is None:
        picked = top_deviating_channels(X, focus, k)
        caption = f"input: the {len(picked)} channels deviating most where the score is high"
        return [(int(j), str) for j in picked], caption
    rows = contributions[focus] if focus.any() else contributions
    positive = np.clip(rows, 0.0, None)
    strength = positive.mean(axis=0)
    total = strength.sum()
    leading = positive.max(axis=1) > 0
    votes = (
        np.bincount(np.argmax(rows[leading], axis=1), minlength=rows.shape[1])
        if leading.any()
        else np.zeros(rows.shape[1], dtype=np.int64)
    )
    order = np.lexsort((-strength, -votes))[: max(1, min(k, X.shape[1]))]
    caption = (
        f"input: the {len(order)} channels contributing most to the score where it is high: ranked "
        "by the rows on which each is the top channel, then by its share of the positive "
        "attribution"
    )

    def labeller(j: int) -> Callable[[str], str]:
        share = strength[j] / total if total > 0 else 0.0
        shown = f"{share:.0%}" if share >= 0.005 or share == 0 else "<1%"
        return lambda name: f"{name}\n{shown}, top on {votes[j]} rows"

    return [(int(j), labeller(int(j))) for j in order], caption
