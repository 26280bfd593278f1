"""The false-alarm budget: how many incidents a policy raises on normal rows, as a level.

People reason in pages: "about 2 false incidents per 10,000 normal rows" means something, a
quantile of training scores does not. Fit measures it on normal rows the model did not fit (the
validation rows at the end of the training rows, which the network never trains on), from their
at-once scores, as a stream would have answered them.

An incident opens at level ``u`` where the ``k``-th largest of the last ``n`` scores passes ``u``,
so each incident of the policy run at a low base level (the ``BASE_QUANTILE`` of the scores) has a
*strength*: the largest of that statistic over its rows, the highest open level at which it would
still have opened. The expected count at level ``u`` is the number of strengths above it (per
10,000 rows), where at least ``TAIL_COUNT`` are; above them, an exponential tail fitted to the
largest ``TAIL_COUNT`` (peaks over threshold with shape 0, which a few hundred validation rows
support where a shape estimate would not). :meth:`IncidentCalibration.level_for` inverts it.
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
    IncidentPolicy,
    track,
)

#: The base level the strengths are measured from: this quantile of the normal at-once scores.
BASE_QUANTILE = 0.9
#: Strengths the exponential tail is fitted to (the largest ones).
TAIL_COUNT = 10
#: Rows an expectation is stated per.
PER_ROWS = 10_000


def kth_largest_trailing(scores: np.ndarray, k: int, n: int) -> np.ndarray:
    """Per row t, the ``k``-th largest of ``scores[t - n + 1 : t + 1]`` (-inf while fewer than
    ``k`` rows): an incident opens at level u on the row where this passes u."""
    scores = np.asarray(scores, dtype=np.float64)
    padded = np.concatenate([np.full(n - 1, -np.inf), scores])
    windows = np.lib.stride_tricks.sliding_window_view(padded, n)
    return np.sort(windows, axis=1)[:, n - k]


@dataclass(frozen=True)
class IncidentCalibration:
    """Incident strengths on ``rows`` normal rows under the policy shape ``(k, n, close_rows,
    close_fraction)``; see the module docstring."""

    rows: int
    strengths: tuple[float, ...]  # largest first
    k: int = DEFAULT_K
    n: int = DEFAULT_N
    close_rows: int = DEFAULT_CLOSE_ROWS
    close_fraction: float = DEFAULT_CLOSE_FRACTION

    @classmethod
    def measure(
        cls,
        normal_scores: np.ndarray,
        *,
        k: int = DEFAULT_K,
        n: int = DEFAULT_N,
        close_rows: int = DEFAULT_CLOSE_ROWS,
        close_fraction: float = DEFAULT_CLOSE_FRACTION,
    ) -> IncidentCalibration:
        """The strengths of the incidents the policy raises on ``normal_scores`` (at once) from
        the base level."""
        scores = np.asarray(normal_scores, dtype=np.float64).reshape(-1)
        if len(scores) < n or not np.all(np.isfinite(scores)):
            raise ParameterError(
                f"calibrating incidents needs at least {n} finite normal scores, got {len(scores)}"
            )
        base = float(np.quantile(scores, BASE_QUANTILE))
        policy = IncidentPolicy.at(
            base, k=k, n=n, close_rows=close_rows, close_fraction=close_fraction
        )
        statistic = kth_largest_trailing(scores, k, n)
        strengths = []
        for incident in track(scores, policy):
            last = len(scores) - 1 if incident.end is None else incident.end
            strengths.append(float(statistic[incident.start : last + 1].max()))
        ordered = tuple(sorted(strengths, reverse=True))
        return cls(len(scores), ordered, k, n, close_rows, close_fraction)

    def fits(self, policy: IncidentPolicy) -> bool:
        """Whether ``policy`` has the shape this calibration measured."""
        return (policy.k, policy.n, policy.close_rows) == (self.k, self.n, self.close_rows)

    def _tail(self) -> tuple[float, float, int]:
        """The exponential tail: its base (the smallest of the largest strengths), mean excess
        and the count above the base."""
        top = np.asarray(self.strengths[:TAIL_COUNT])
        if len(top) < 2:
            raise ParameterError(
                f"{len(top)} incidents on {self.rows} normal rows: too few to calibrate a "
                "false-alarm budget (more validation rows, or a larger validation_size)"
            )
        base = float(top[-1])
        return base, max(float(np.mean(top - base)), 1e-12), len(top)

    def expected(self, level: float) -> float:
        """Expected false incidents per ``PER_ROWS`` normal rows with the policy opening at
        ``level``."""
        count = sum(s > level for s in self.strengths)
        if count < TAIL_COUNT and len(self.strengths) >= 2:
            base, excess, m = self._tail()
            if level > base:
                count = m * math.exp(-(level - base) / excess)
        return PER_ROWS * count / self.rows

    def level_for(self, per_rows: float) -> float:
        """The open level at which :meth:`expected` is ``per_rows`` false incidents per
        ``PER_ROWS`` normal rows."""
        if not (isinstance(per_rows, (int, float)) and per_rows > 0 and math.isfinite(per_rows)):
            raise ParameterError(f"the false-incident budget must be > 0, got {per_rows!r}")
        target = per_rows * self.rows / PER_ROWS  # incidents on these rows
        base, excess, m = self._tail()
        if target >= m:
            return float(self.strengths[min(int(target), len(self.strengths) - 1)])
        return base + excess * math.log(m / target)

    def record(self) -> dict:
        """JSON-ready values (model files keep it)."""
        return {
            "rows": self.rows,
            "strengths": list(self.strengths),
            "k": self.k,
            "n": self.n,
            "close_rows": self.close_rows,
            "close_fraction": self.close_fraction,
        }

    @classmethod
    def from_record(cls, record: dict) -> IncidentCalibration:
        return cls(
            int(record["rows"]),
            tuple(float(s) for s in record["strengths"]),
            int(record["k"]),
            int(record["n"]),
            int(record["close_rows"]),
            float(record["close_fraction"]),
        )


__all__ = ["BASE_QUANTILE", "PER_ROWS", "TAIL_COUNT", "IncidentCalibration", "kth_largest_trailing"]
