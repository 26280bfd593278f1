"""The ridge next-step error as a part of the score (``ar``): a step's value is its squared
prediction error on the standardised rows, averaged over the predicted columns.

An input-space forecast error (the lead of forecasting detectors on TSB-AD) without the network's
saturation. Only columns with more than ``FEW_LEVELS`` distinct training values are predicted: the
next step of a binary command channel is a coin flip, whose errors were noise. The value of step t
reads steps <= t only, so it is final at once (``point_wise``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from madcluster.score.parts import FitContext, Part, PartStream
from madcluster.score.window_kmeans import FEW_LEVELS, column_levels

AR_LAGS, AR_RIDGE = 5, 1.0  # chosen on the development set
AR_MAX_REGRESSORS = (
    1024  # wide data: fewer lags (at least 1), so the ridge solve stays about a second
)


def lagged(z: np.ndarray, lags: int, history: np.ndarray | None = None) -> np.ndarray:
    """Rows ``[z_{t-1}, ..., z_{t-lags}, 1]`` for every step t; ``history``: the ``lags`` rows
    before ``z`` (a stream's last rows). Without it, before the first row the history repeats it
    (a series' first steps then score as a steady start, not as a jump from zero)."""
    history = np.repeat(z[:1], lags, axis=0) if history is None else history
    padded = np.vstack([history, z])
    shifted = (padded[lags - k : lags - k + len(z)] for k in range(1, lags + 1))
    return np.hstack([*shifted, np.ones((len(z), 1))])


@dataclass(frozen=True)
class AutoRegressive(Part):
    """A fitted ridge next-step predictor on standardised rows: ``coef`` maps lags (+ 1) of the
    ``columns`` it predicts to their next values."""

    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray  # (lags * C + 1, C) for the C predicted columns
    lags: int
    columns: np.ndarray  # indices of the predicted columns (none: the part is 0)
    # the training mean error, the value of a series' first ``lags`` steps (None in older files:
    # those steps read the first row repeated as their history)
    start_value: float | None = None

    name: ClassVar[str] = "ar"
    point_wise: ClassVar[bool] = True

    @classmethod
    def fit(
        cls,
        rows: np.ndarray,
        context: FitContext | None = None,
        lags: int = AR_LAGS,
        ridge: float = AR_RIDGE,
        max_levels: int = FEW_LEVELS,
    ) -> AutoRegressive:
        """The ridge predictor of the columns of training ``rows`` with more than ``max_levels``
        values (``context``: unused)."""
        data = np.asarray(rows, dtype=np.float64)
        columns = np.flatnonzero(column_levels(data) > max_levels).astype(np.int64)
        data = data[:, columns]
        lags = max(1, min(lags, AR_MAX_REGRESSORS // max(1, len(columns))))
        mean, scale = data.mean(axis=0), data.std(axis=0)
        scale = np.where(
            scale > 1e-8, scale, 1.0
        )  # a constant column: unit scale, as the network's scaler
        z = (data - mean) / scale
        a = lagged(z, lags)
        coef = np.linalg.solve(a.T @ a + ridge * np.eye(a.shape[1]), a.T @ z)
        errors = ((a @ coef - z) ** 2).mean(axis=1)[lags:] if len(columns) else np.zeros(0)
        return cls(mean, scale, coef, lags, columns, float(errors.mean()) if len(errors) else 0.0)

    def to_arrays(self) -> dict[str, np.ndarray]:
        start = (
            {}
            if self.start_value is None
            else {"start_value": np.asarray(self.start_value, dtype=np.float64)}
        )
        return {
            "mean": self.mean,
            "scale": self.scale,
            "coef": self.coef,
            "lags": np.asarray(self.lags, dtype=np.int64),
            "columns": np.asarray(self.columns, dtype=np.int64),
            **start,
        }

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> AutoRegressive:
        start = float(arrays["start_value"]) if "start_value" in arrays else None
        return cls(
            arrays["mean"],
            arrays["scale"],
            arrays["coef"],
            int(arrays["lags"]),
            arrays["columns"],
            start,
        )

    def values(
        self, rows: np.ndarray, history: np.ndarray | None = None, first_step: int = 0
    ) -> np.ndarray:
        """Squared next-step error per step, averaged over the predicted columns; ``history``:
        the ``lags`` standardised rows before ``rows`` (:meth:`standardise`; None: a series'
        start, where the first row repeated stands in for it); ``first_step``: the step of
        ``rows[0]``.

        Steps ``< lags`` of a series have no full history: a prediction from the stand-in jumps,
        and on normal data they were flagged three to four times as often as the rest. They take
        ``start_value`` (the training mean error: no evidence either way) instead."""
        if len(self.columns) == 0:
            return np.zeros(len(rows))
        z = self.standardise(rows)
        values = ((lagged(z, self.lags, history) @ self.coef - z) ** 2).mean(axis=1)
        if self.start_value is not None and first_step < self.lags:
            values[: self.lags - first_step] = self.start_value
        return values

    def standardise(self, rows: np.ndarray) -> np.ndarray:
        """The predicted columns of ``rows``, standardised as the predictor reads them."""
        return (np.asarray(rows, dtype=np.float64)[:, self.columns] - self.mean) / self.scale

    def stream(self) -> AutoRegressiveStream:
        return AutoRegressiveStream(self)


@dataclass
class AutoRegressiveStream(PartStream):
    """The ridge part over a growing series: the last ``lags`` standardised rows."""

    part: AutoRegressive
    history: np.ndarray | None = None  # None: no row seen yet
    steps_seen: int = 0

    def append(self, rows: np.ndarray, given: np.ndarray | None = None) -> np.ndarray:
        """The part at checked ``rows`` (final at once), remembering them as the next history."""
        part = self.part
        if len(part.columns) == 0:
            return np.zeros(len(rows))
        z = part.standardise(rows)
        history = np.repeat(z[:1], part.lags, axis=0) if self.history is None else self.history
        values = part.values(rows, history, self.steps_seen)
        self.history = np.concatenate([history, z])[-part.lags :]
        self.steps_seen += len(rows)
        return values

    def state(self) -> dict[str, np.ndarray]:
        if self.history is None:
            return {}
        return {"history": self.history, "steps": np.asarray(self.steps_seen, dtype=np.int64)}

    def load(self, arrays: dict[str, np.ndarray]) -> None:
        self.history = arrays.get("history")
        self.steps_seen = int(arrays.get("steps", 0 if self.history is None else self.part.lags))


__all__ = ["AR_LAGS", "AR_RIDGE", "AutoRegressive", "AutoRegressiveStream", "lagged"]
