"""Centred means of the score's point-wise parts (``part_smoothing``).

Why: MADCluster's own score and the ridge next-step error are read step by step, and step to step
they are noisy; the window-KMeans part is already a mean over the windows covering a step. The
anomalies that matter last tens of steps, and a range-aware metric (VUS-PR) rewards a score that
stays up over the whole range rather than a few spikes inside it. A centred mean of the own score
over ``L // 2`` steps and of the next-step error over ``L // 10`` lifted every development set
(46 TSB-AD series .565 -> .621 mean VUS-PR, the synthetic suite .944 -> .960 ROC-AUC, the demo
series .985 -> .989: ``benchmarks/results/parts/smoothing.md``).

Each step averages exactly ``width`` values, the block centred on it; near either end, the block
of as many values nearest to it (as :func:`~madcluster.score.window_kmeans.balanced_window_means`
does for windows), so the first and last steps swing no more than the middle. A step's mean reads
up to ``width // 2`` later steps, so a stream's value of it is final a few rows later
(:class:`SmoothedStream`); what a stream answers at once reads the block cut at the step (a
trailing mean of ``(width - 1) // 2 + 1`` values, :func:`trailing_means`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from madcluster.exceptions import ParameterError

#: Default widths as fractions of the window L (chosen on the development set, module docstring).
DEFAULT_FRACTIONS: dict[str, float] = {"own": 0.5, "ar": 0.1}


def check_part_smoothing(value: object) -> dict[str, int] | None:
    """``part_smoothing``: None (the defaults, from the window) or ``{part: width}`` with widths >=
    1 (1: no smoothing; a part not given keeps its default), or a ``ParameterError``."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ParameterError(
            f"part_smoothing must be None or a dict like {{'own': 50, 'ar': 10}}, got {value!r}"
        )
    out: dict[str, int] = {}
    smoothable = smoothable_parts()
    for name, width in value.items():
        if name not in smoothable:
            raise ParameterError(
                f"part_smoothing: unknown part {name!r}; the point-wise parts are "
                f"{', '.join(smoothable)}"
            )
        if isinstance(width, bool) or not isinstance(width, (int, np.integer)) or width < 1:
            raise ParameterError(
                f"part_smoothing[{name!r}] must be an integer >= 1 (steps), got {width!r}"
            )
        out[name] = int(width)
    return out


def smoothable_parts() -> tuple[str, ...]:
    """The parts a centred mean may apply to: the point-wise ones (``kmeans`` is a window mean
    already)."""
    from madcluster.score.parts import PART_KINDS, part_class

    return tuple(n for n in PART_KINDS if part_class(n).point_wise)


def resolve_part_smoothing(value: dict[str, int] | None, window_size: int) -> dict[str, int]:
    """The widths a fit records: the defaults for windows of ``window_size``, overridden by
    ``value``."""
    defaults = {name: max(1, int(window_size * f)) for name, f in DEFAULT_FRACTIONS.items()}
    return {**defaults, **(value or {})}


def centred_means(
    values: np.ndarray,
    width: int,
    n_steps: int | None = None,
    steps: np.ndarray | None = None,
    first: int = 0,
) -> np.ndarray:
    """Per step, the mean of ``width`` values: those of steps ``[a_t, a_t + width)`` with
    ``a_t = clip(t - (width - 1) // 2, 0, n_steps - width)`` (all ``n_steps`` when fewer).

    ``values`` holds steps ``first..`` of a series of ``n_steps`` (default:
    ``first + len(values)``); ``steps`` (default: all of them) must find their blocks in it. A
    block's sum depends on its values alone, so a stream and a whole series give the same bits.
    """
    values = np.asarray(values, dtype=np.float64)
    n = first + len(values) if n_steps is None else n_steps
    steps = np.arange(first, n) if steps is None else np.asarray(steps)
    if width <= 1:
        return values[steps - first]
    span = min(width, n)
    start = np.clip(steps - (width - 1) // 2, 0, n - span) - first
    return values[start[:, None] + np.arange(span)].sum(axis=1) / span


def causal_width(width: int) -> int:
    """Values in the part of a centred block of ``width`` that lies at or before its step."""
    return (width - 1) // 2 + 1


def trailing_means(
    values: np.ndarray, width: int, steps: np.ndarray | None = None, first: int = 0
) -> np.ndarray:
    """Per step t, the mean of the values of steps ``t - width + 1 .. t`` (fewer at the series'
    start): a centred mean cut at t (:func:`causal_width`), what a stream can read at once.

    ``values`` holds steps ``first..``; ``steps`` (default: all of them) must find their values in
    it (``first`` is 0 for steps before ``width - 1``). A window's sum depends on its values alone
    (the steps before the series' start count as 0), so a stream and a whole series give the same
    bits."""
    values = np.asarray(values, dtype=np.float64)
    steps = np.arange(first, first + len(values)) if steps is None else np.asarray(steps)
    padded = np.concatenate([np.zeros(width - 1), values])
    return padded[(steps - first)[:, None] + np.arange(width)].sum(axis=1) / np.minimum(
        steps + 1, width
    )


def final_before(width: int, n_steps: int) -> int:
    """The first step whose centred mean ``n_steps`` values do not fix yet (later values may move
    its block): ``t`` is final once ``t - (width - 1) // 2 <= n - width``."""
    if width <= 1:
        return n_steps
    return n_steps - width + (width - 1) // 2 + 1 if n_steps >= width else 0


@dataclass
class SmoothedStream:
    """One part's centred mean over a growing series: the raw values its pending steps read."""

    width: int
    steps_seen: int = 0
    first: int = 0  # the step of values[0]
    values: np.ndarray = field(default_factory=lambda: np.empty(0))

    def append(self, new: np.ndarray) -> None:
        self.values = np.concatenate([self.values, np.asarray(new, dtype=np.float64)])
        self.steps_seen += len(new)

    def means(self, steps: np.ndarray) -> np.ndarray:
        """The centred means of ``steps`` on the values seen so far (as if the series ended
        here)."""
        return centred_means(self.values, self.width, self.steps_seen, steps, self.first)

    def trailing(self, steps: np.ndarray, width: int) -> np.ndarray:
        """The at-once reading of ``steps`` (the newest ones): their trailing means of ``width``
        (at most the centred block cut at each step, :func:`causal_width`, which the values kept
        reach)."""
        return trailing_means(self.values, width, steps, self.first)

    def final_before(self) -> int:
        return final_before(self.width, self.steps_seen)

    def forget_before(self, step: int) -> None:
        """Drop the values no step from ``step`` on reads, now or after more rows."""
        keep_from = max(self.first, min(step - (self.width - 1) // 2, self.steps_seen - self.width))
        self.values, self.first = self.values[keep_from - self.first :], keep_from

    def state(self) -> dict[str, np.ndarray]:
        return {
            "steps": np.asarray([self.steps_seen, self.first], dtype=np.int64),
            "values": self.values,
        }

    def load(self, arrays: dict[str, np.ndarray]) -> None:
        self.steps_seen, self.first = (int(v) for v in arrays["steps"])
        self.values = arrays["values"].astype(np.float64)


__all__ = [
    "DEFAULT_FRACTIONS",
    "SmoothedStream",
    "causal_width",
    "centred_means",
    "check_part_smoothing",
    "final_before",
    "resolve_part_smoothing",
    "smoothable_parts",
    "trailing_means",
]
