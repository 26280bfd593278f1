"""Which channels drive the anomaly score: per-channel contributions by occlusion.

``contributions[t, j] = score(x)[t] - score(x with channel j held at its training mean)[t]``:
how much of step t's score goes away when channel j is made "normal". Positive values point at
the channels behind an alert; a channel whose occlusion leaves the score unchanged gets 0.

Why occlusion, not gradients: it needs nothing from the model but its score, so one method
serves MADCluster with every base model (the D-RNN, USAD, the Anomaly Transformer, THOC,
DCDetector, ... several of which score under ``torch.no_grad`` or through non-differentiable
steps) and explains exactly the score the user sees, threshold and all. It costs one extra
scoring pass per channel (``benchmarks/studies/models/attribution.py`` measures it).
"Held at its training mean" is 0 in the scaled input the network sees, for the channel and for
any channel derived from it (the roughness channels of ``roughness_window``), so a derived
channel never sees a value that could not occur in training. ``explain(X, rows=mask)`` explains
only the masked steps (e.g. those above the threshold), scoring just the spans around them, which
is what ``madcluster score`` does: the cost then grows with the number of alerts, not with the
length of the series.

What ``MADCluster.explain`` returns is not the raw score drop but a standardised sum of two
per-channel terms, each measured against what it is on normal data (:func:`fit_baseline`, on
the training series at fit time):

* the occlusion drop above, as a z-score against the same channel's drops on training steps, so a
  channel whose occlusion always moves the score (one the model leans on everywhere) does not
  outrank the one that is anomalous now;
* the channel's input deviation, ``max |scaled input|`` over its columns (value and roughness), as
  a z-score against training: it names the channel where the score saturates or the occlusion
  reference is itself unusual (a variance burst or a spike in an oscillating channel, where
  "held at the mean" is no calmer than the anomaly).

Chosen on seed 0 of ``benchmarks/studies/models/attribution.py`` among occlusion with the
training mean or with a local median, raw or standardised, with and without the deviation term;
reported on other seeds in ``benchmarks/results/attribution.md``. Models saved before the baseline
existed explain with the raw occlusion drop.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from madcluster.exceptions import ParameterError

#: Channels named in the scores CSV's ``top_channels`` column, most contributing first.
TOP_CHANNELS = 3
TOP_SEPARATOR = ";"
#: Training rows :func:`fit_baseline` measures (bounds its cost at fit time).
BASELINE_STEPS = 4000
#: Smallest spread a z-score divides by, as a fraction of the largest channel's spread.
SPREAD_FLOOR = 1e-3


def occlusion_contributions(
    score: Callable[[np.ndarray], np.ndarray],
    inputs: np.ndarray,
    groups: Sequence[Sequence[int]],
) -> np.ndarray:
    """``(T, len(groups))``: ``score(inputs)`` minus the score with group g's columns set to 0.

    ``inputs`` is the scaled model input (0 = training mean); ``groups[g]`` lists the input
    columns that belong to channel g (the channel and the channels derived from it).
    """
    full = np.asarray(score(inputs), dtype=np.float64)
    out = np.empty((len(full), len(groups)), dtype=np.float64)
    occluded = np.array(inputs, copy=True)
    for g, columns in enumerate(groups):
        columns = list(columns)
        kept = occluded[:, columns].copy()
        occluded[:, columns] = 0.0
        out[:, g] = full - np.asarray(score(occluded), dtype=np.float64)
        occluded[:, columns] = kept
    return out


def input_deviation(inputs: np.ndarray, groups: Sequence[Sequence[int]]) -> np.ndarray:
    """``(T, len(groups))``: per channel, the largest ``|scaled input|`` over its columns (0 = the
    training mean, 1 = one training standard deviation away)."""
    magnitude = np.abs(np.asarray(inputs, dtype=np.float64))
    return np.stack([magnitude[:, list(columns)].max(axis=1) for columns in groups], axis=1)


def fit_baseline(
    score: Callable[[np.ndarray], np.ndarray],
    inputs: np.ndarray,
    groups: Sequence[Sequence[int]],
    max_steps: int = BASELINE_STEPS,
) -> np.ndarray:
    """``(4, len(groups))``: per channel, the mean and standard deviation (floored:
    :func:`spread_with_floor`) of the occlusion drop, then of the input deviation, on the last
    ``max_steps`` rows of normal (training) model input.

    Costs ``len(groups) + 1`` scoring passes over at most ``max_steps`` rows, once, at fit time.
    """
    normal = np.asarray(inputs)[-max_steps:]
    terms = (occlusion_contributions(score, normal, groups), input_deviation(normal, groups))
    return np.stack(
        [stat for term in terms for stat in (term.mean(axis=0), spread_with_floor(term))]
    )


def spread_with_floor(term: np.ndarray) -> np.ndarray:
    """Per-column standard deviation, at least ``SPREAD_FLOOR`` times the largest one (1 if all
    are 0): a channel the score ignores on normal data (or one held constant) must not turn
    rounding noise into a huge z-score."""
    spread = term.std(axis=0)
    largest = float(spread.max()) if spread.size else 0.0
    return np.maximum(spread, SPREAD_FLOOR * largest) if largest > 0 else np.ones_like(spread)


def standardised_contributions(
    occlusion: np.ndarray, deviation: np.ndarray, baseline: np.ndarray
) -> np.ndarray:
    """The occlusion drop's and the input deviation's z-scores against ``baseline``
    (:func:`fit_baseline`), summed: > 0 where a channel is more behind the score than it is on
    normal data."""
    return (occlusion - baseline[0]) / baseline[1] + (deviation - baseline[2]) / baseline[3]


def spans_around(rows: np.ndarray, context: int, length: int) -> list[tuple[int, int]]:
    """``[start, end)`` spans covering the True ``rows`` with ``2 * context`` steps before and
    ``context`` after each run (so every explained step keeps a full window of history), merged
    where they overlap."""
    rows = np.asarray(rows, dtype=bool)
    edges = np.flatnonzero(np.diff(np.concatenate([[0], rows.astype(np.int8), [0]])))
    spans: list[tuple[int, int]] = []
    for start, end in zip(edges[::2], edges[1::2]):
        lo, hi = max(0, int(start) - 2 * context), min(length, int(end) + context)
        if hi - lo < context:  # shorter than one window: widen to one window
            lo, hi = max(0, hi - context), max(hi, min(length, lo + context))
        if spans and lo <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(spans[-1][1], hi))
        else:
            spans.append((lo, hi))
    return spans


def channel_groups(n_channels: int, n_inputs: int) -> list[list[int]]:
    """Input columns of each channel: ``[j]``, plus ``j + D``, ``j + 2D``, ... for derived ones."""
    if n_inputs % n_channels:
        raise ParameterError(f"{n_inputs} model inputs are not a multiple of {n_channels} channels")
    return [list(range(j, n_inputs, n_channels)) for j in range(n_channels)]


def top_channels(
    contributions: np.ndarray, names: Sequence[str], k: int = TOP_CHANNELS
) -> list[str]:
    """Per row, the names of the ``k`` channels with the largest positive contribution,
    joined by ``;`` (empty where no channel raises the score)."""
    contributions = np.asarray(contributions, dtype=np.float64)
    k = min(k, contributions.shape[1])
    order = np.argsort(-contributions, axis=1, kind="stable")[:, :k]
    picked = np.take_along_axis(contributions, order, axis=1) > 0
    names = [str(n) for n in names]
    return [
        TOP_SEPARATOR.join(names[j] for j, keep in zip(row, keep_row) if keep)
        for row, keep_row in zip(order, picked)
    ]


def channel_ranking(contributions: np.ndarray, rows: np.ndarray | slice) -> np.ndarray:
    """Channels ordered by their mean contribution over ``rows`` (e.g. one alert's span)."""
    mean = np.asarray(contributions, dtype=np.float64)[rows].mean(axis=0)
    return np.argsort(-mean, kind="stable")


class AttributionBaseline:
    """A fitted model's attribution baseline (:func:`fit_baseline`): given (a model file's; None:
    one written before the baseline, whose ``explain`` gives the raw occlusion drop), or measured
    on the training model input ``rows`` when first needed (the first ``explain``, or a save), not
    in ``fit``: its ``D + 1`` scoring passes were 1.1 s of the 20,000 x 6 fit. The same rows and
    the same float32 network give the same baseline."""

    def __init__(self, values: np.ndarray | None = None, rows: np.ndarray | None = None) -> None:
        self._values = values
        self._rows = None if rows is None else np.array(rows[-BASELINE_STEPS:])

    def values(self, model: Any) -> np.ndarray | None:
        """The baseline of fitted ``model``, measured now if it was deferred. Scored with the
        float32 network the fit trained, not the float64 copy: a mean and spread over thousands
        of steps, which float32's 1e-7 does not move."""
        if self._values is None and self._rows is not None:
            net = model.net.eval()
            groups = channel_groups(model.inputs.n_features, self._rows.shape[1])
            self._values = fit_baseline(lambda x: model.own_scores(x, net=net), self._rows, groups)
            self._rows = None
        return self._values


def explain(model: Any, X: Any, rows: Any = None) -> np.ndarray:
    """Per-channel contributions to fitted ``model``'s score of ``X``, ``(T, D)``
    (:meth:`MADCluster.explain <madcluster.estimator.detector.MADCluster.explain>`); ``rows``: a
    boolean mask of the steps to explain (the others are 0), scoring only the spans around them."""
    inputs = model.inputs.checked_input(X)
    groups = channel_groups(model.inputs.n_features, inputs.shape[1])
    baseline = model.attribution.values(model)

    def explain_span(span: np.ndarray) -> np.ndarray:
        occlusion = occlusion_contributions(model.own_scores, span, groups)
        if baseline is None:
            return occlusion
        return standardised_contributions(occlusion, input_deviation(span, groups), baseline)

    if rows is None:
        return explain_span(inputs)
    mask = np.asarray(rows, dtype=bool)
    if mask.shape != (len(inputs),):
        raise ParameterError(
            f"rows must be a boolean mask of the {len(inputs)} rows, got shape {mask.shape}"
        )
    out = np.zeros((len(inputs), len(groups)))
    for start, end in spans_around(mask, model.grid.window_size, len(inputs)):
        out[start:end] = explain_span(inputs[start:end])
    out[~mask] = 0.0
    return out
