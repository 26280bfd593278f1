"""The false-alarm budget: how many incidents a policy raises on normal rows, as a level.

People reason in pages: "about 2 false incidents per 10,000 normal rows" means something, a
quantile of training scores does not. Fit measures it on normal rows the model did not fit (the
validation rows at the end of the training rows, which the network never trains on), from their
at-once scores, as a stream would have answered them.

An incident opens at level ``u`` where the ``k``-th largest of the last ``n`` scores passes ``u``
(or, with a spike path, a score passes ``spike_factor * u``: the statistic is the larger of the
two, the score divided by the factor).
The policy is run on the normal rows at levels from the median of that statistic up; the *base*
is the highest level at which it still raises ``TAIL_COUNT`` incidents (else the level raising
the most). Each incident there has a *strength*: the largest of the statistic over its rows, the
highest open level at which it would still have opened. Above the base, the expected count
follows an exponential tail fitted to the strengths' excesses (peaks over threshold with shape 0,
which a thousand validation rows support where a shape estimate would not):
``count(u) = m * exp(-(u - base) / mean excess)``. :meth:`IncidentCalibration.level_for`
inverts it. An approximation: at a higher level the policy closes at a higher level too, which
can split an incident in two; the benchmark measures how it holds on test rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from madcluster.exceptions import ParameterError
from madcluster.incidents.policy import (
    DEFAULT_CLOSE_FRACTION,
    DEFAULT_CLOSE_ROWS,
    DEFAULT_K,
    DEFAULT_N,
    DEFAULT_SPIKE_FACTOR,
    IncidentPolicy,
    track,
)

#: Levels tried for the base: these quantiles of the k-th-largest statistic on the normal rows.
BASE_QUANTILES = tuple(float(q) for q in np.linspace(0.5, 0.995, 34))
#: Incidents the base level raises at least (where any level does).
TAIL_COUNT = 10
#: Incidents a calibration needs at least to fit its tail (fewer: no level, no expectation).
MIN_TAIL_INCIDENTS = 2
#: Rows an expectation is stated per.
PER_ROWS = 10_000
#: The budget a model's incidents open at by default (where it is above ``threshold_``), per
#: PER_ROWS normal rows: chosen with the policy's shape (benchmarks/results/incidents.md).
DEFAULT_FALSE_INCIDENTS = 2.0


def kth_largest_trailing(scores: np.ndarray, k: int, n: int) -> np.ndarray:
    """Per row t, the ``k``-th largest of ``scores[t - n + 1 : t + 1]`` (-inf while fewer than
    ``k`` rows): an incident opens at level u on the row where this passes u."""
    scores = np.asarray(scores, dtype=np.float64)
    padded = np.concatenate([np.full(n - 1, -np.inf), scores])
    windows = np.lib.stride_tricks.sliding_window_view(padded, n)
    return np.sort(windows, axis=1)[:, n - k]


def opening_statistic(
    scores: np.ndarray, k: int, n: int, spike_factor: float | None = None
) -> np.ndarray:
    """Per row t, the highest open level at which the policy would open on row t: the ``k``-th
    largest of the trailing ``n`` scores, or the score over ``spike_factor`` where that is larger
    (the spike path)."""
    statistic = kth_largest_trailing(scores, k, n)
    if spike_factor is None:
        return statistic
    return np.maximum(statistic, np.asarray(scores, dtype=np.float64) / spike_factor)


@dataclass(frozen=True)
class IncidentCalibration:
    """Incident strengths on ``rows`` normal rows under the policy shape ``(k, n, close_rows,
    close_fraction)``; see the module docstring."""

    rows: int
    base: float
    strengths: tuple[float, ...]  # of the incidents raised at the base level, largest first
    k: int = DEFAULT_K
    n: int = DEFAULT_N
    close_rows: int = DEFAULT_CLOSE_ROWS
    close_fraction: float = DEFAULT_CLOSE_FRACTION
    settle_rows: int = 0  # not measured (the validation rows come settled): the policy's shape
    spike_factor: float | None = None
    #: Measured on training rows the network trained on (too few held-out rows): an optimistic
    #: estimate, more false incidents expected than it says.
    in_sample: bool = False
    #: The lowest level incidents open at, where not the model's ``threshold_`` (None: that;
    #: records from before it): the threshold of its training scores with the weights its
    #: at-once score pairs with (``madcluster.estimator.incident_scoring.incident_floor``).
    floor: float | None = None

    @classmethod
    def measure(
        cls,
        normal_scores: np.ndarray,
        *,
        k: int = DEFAULT_K,
        n: int = DEFAULT_N,
        close_rows: int = DEFAULT_CLOSE_ROWS,
        close_fraction: float = DEFAULT_CLOSE_FRACTION,
        settle_rows: int = 0,
        spike_factor: float | None = DEFAULT_SPIKE_FACTOR,
        in_sample: bool = False,
    ) -> IncidentCalibration:
        """The strengths of the incidents the policy raises on ``normal_scores`` (at once) from
        the base level; ``in_sample``: the scores are of rows the model trained on."""
        scores = np.asarray(normal_scores, dtype=np.float64).reshape(-1)
        if len(scores) < n or not np.all(np.isfinite(scores)):
            raise ParameterError(
                f"calibrating incidents needs at least {n} finite normal scores, got {len(scores)}"
            )
        statistic = opening_statistic(scores, k, n, spike_factor)
        finite = statistic[np.isfinite(statistic)]
        best: tuple[float, list[float]] = (float(finite.max()), [])
        for level in np.unique(np.quantile(finite, BASE_QUANTILES))[::-1]:  # highest first
            policy = IncidentPolicy.at(
                float(level),
                k=k,
                n=n,
                close_rows=close_rows,
                close_fraction=close_fraction,
                settle_rows=0,  # the validation rows come settled
                spike_factor=spike_factor,
            )
            strengths = [
                float(statistic[i.start : (len(scores) - 1 if i.end is None else i.end) + 1].max())
                for i in track(scores, policy)
            ]
            if len(strengths) > len(best[1]):
                best = (float(level), strengths)
            if len(strengths) >= TAIL_COUNT:
                break
        base, strengths = best
        ordered = tuple(sorted(strengths, reverse=True))
        shape = (k, n, close_rows, close_fraction, settle_rows, spike_factor)
        return cls(len(scores), base, ordered, *shape, in_sample=in_sample)

    def policy(self, level: float, confirm_level: float | None = None) -> IncidentPolicy:
        """The policy of the shape this calibration measured, opening at ``level``."""
        return IncidentPolicy.at(
            level,
            k=self.k,
            n=self.n,
            close_rows=self.close_rows,
            close_fraction=self.close_fraction,
            confirm_level=confirm_level,
            settle_rows=self.settle_rows,
            spike_factor=self.spike_factor,
        )

    @property
    def fits_tail(self) -> bool:
        """Whether its rows raised enough incidents (:data:`MIN_TAIL_INCIDENTS`) to fit the tail:
        without, it gives no level and no expectation."""
        return len(self.strengths) >= MIN_TAIL_INCIDENTS

    def _excess(self) -> float:
        """The strengths' mean excess over the base: the exponential tail's scale."""
        if not self.fits_tail:
            more = (
                "a longer training series"
                if self.in_sample
                else "a larger validation_size, or a longer training series"
            )
            raise ParameterError(
                f"{len(self.strengths)} incidents on {self.rows} normal rows at any level: too "
                f"few to calibrate a false-alarm budget (more rows: {more})"
            )
        return max(float(np.mean(np.asarray(self.strengths) - self.base)), 1e-12)

    def expected(self, level: float) -> float:
        """Expected false incidents per ``PER_ROWS`` normal rows with the policy opening at
        ``level`` (at or above the base; below it, the base's count, a lower bound)."""
        count = len(self.strengths) * math.exp(-max(0.0, level - self.base) / self._excess())
        return PER_ROWS * count / self.rows

    def level_for(self, per_rows: float) -> float:
        """The open level at which :meth:`expected` is ``per_rows`` false incidents per
        ``PER_ROWS`` normal rows (the base where the normal rows raise fewer at any level)."""
        if not (isinstance(per_rows, (int, float)) and per_rows > 0 and math.isfinite(per_rows)):
            raise ParameterError(f"the false-incident budget must be > 0, got {per_rows!r}")
        target = per_rows * self.rows / PER_ROWS  # incidents on these rows
        excess = self._excess()
        return self.base + excess * max(0.0, math.log(len(self.strengths) / target))

    def record(self) -> dict:
        """JSON-ready values (model files keep it)."""
        return {
            "rows": self.rows,
            "base": self.base,
            "strengths": list(self.strengths),
            "k": self.k,
            "n": self.n,
            "close_rows": self.close_rows,
            "close_fraction": self.close_fraction,
            "settle_rows": self.settle_rows,
            "spike_factor": self.spike_factor,
            "in_sample": self.in_sample,
            **({} if self.floor is None else {"floor": self.floor}),
        }

    @classmethod
    def from_record(cls, record: dict) -> IncidentCalibration:
        """The calibration :meth:`record` wrote; a record from before the settle rows and the
        spike path keeps the shape it measured (neither), one from before in-sample
        calibrations was measured on held-out rows (the only kind then), one from before the
        floor opens at ``threshold_``."""
        spike = record.get("spike_factor")
        return cls(
            int(record["rows"]),
            float(record["base"]),
            tuple(float(s) for s in record["strengths"]),
            int(record["k"]),
            int(record["n"]),
            int(record["close_rows"]),
            float(record["close_fraction"]),
            int(record.get("settle_rows", 0)),
            None if spike is None else float(spike),
            bool(record.get("in_sample", False)),
            None if record.get("floor") is None else float(record["floor"]),
        )


__all__ = [
    "BASE_QUANTILES",
    "DEFAULT_FALSE_INCIDENTS",
    "MIN_TAIL_INCIDENTS",
    "PER_ROWS",
    "TAIL_COUNT",
    "IncidentCalibration",
    "kth_largest_trailing",
    "opening_statistic",
]
