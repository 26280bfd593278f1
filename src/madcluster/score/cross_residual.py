"""The same-step cross-column residual (``cross``): a part of the *at-once* score only.

Each predicted column is regressed (ridge, on the standardised training rows) on the other
columns at the same step and on every column's last ``lags`` rows; a step's value is the mean
over the columns of its squared error, each standardised by that column's training errors (so a
noisy column does not drown the rest).

Why at once only: incidents page on the at-once score, and the anomalies it lifted late are the
ones that break how columns move *together* from their first row (a CPU channel replaying another
time, a request cycle running faster, a channel stuck): the next-step part predicts a column from
the last rows alone (a replayed channel is smooth within itself), the window parts need a
window's worth of rows. The final score, which sees both sides of a row, reads those anomalies
already, so this part is left out of it (:attr:`at_once_only`): final scores are as before. Chosen
on the development families by the incident rule (``benchmarks/results/incidents_policy.md``).

A series with fewer than two predicted columns has no same-step evidence: the part is 0 there.
All columns are regressed at once through one inverse: for ``M = A^T A + ridge I`` over the rows
``A = [z_t, z_{t-1}, ..., z_{t-lags}, 1]``, column j's ridge residual given the rest of the row is
``(A M^{-1})_j / (M^{-1})_jj`` (the Schur complement), exactly the ridge fit of column j alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from madcluster.score.autoregressive import AR_LAGS, AR_RIDGE, AutoRegressiveStream, lagged
from madcluster.score.parts import FitContext, Part
from madcluster.score.window_kmeans import FEW_LEVELS, column_levels

MAX_REGRESSORS = 2048  # wide data: fewer lags (at least 1), so the one inverse stays about a second


@dataclass(frozen=True)
class CrossResidual(Part):
    """Fitted: the predicted ``columns``, their training ``mean`` and ``scale``, the rows'
    ``lags``, ``residuals`` (``M^{-1}[:, :C] / diag``: a row's regressors times it is each
    column's residual) and each column's training squared-error mean and deviation."""

    mean: np.ndarray
    scale: np.ndarray
    residuals: np.ndarray  # ((lags + 1) * C + 1, C)
    lags: int
    columns: np.ndarray  # indices of the predicted columns (fewer than 2: the part is 0)
    error_mean: np.ndarray
    error_scale: np.ndarray

    name: ClassVar[str] = "cross"
    point_wise: ClassVar[bool] = True
    at_once_only: ClassVar[bool] = True

    @classmethod
    def fit(
        cls, rows: np.ndarray, context: FitContext | None = None, lags: int = AR_LAGS,
        ridge: float = AR_RIDGE,
    ) -> CrossResidual:  # fmt: skip
        """The residuals of the columns of training ``rows`` with more than ``FEW_LEVELS`` values
        (``context``: unused)."""
        data = np.asarray(rows, dtype=np.float64)
        columns = np.flatnonzero(column_levels(data) > FEW_LEVELS).astype(np.int64)
        n = len(columns)
        lags = max(1, min(lags, MAX_REGRESSORS // max(1, n) - 1))
        if n < 2:
            empty = np.zeros((0,))
            return cls(empty, empty, np.zeros(((lags + 1) * n + 1, n)), lags, columns, empty, empty)
        data = data[:, columns]
        mean, scale = data.mean(axis=0), data.std(axis=0)
        scale = np.where(scale > 1e-8, scale, 1.0)
        a = _regressors((data - mean) / scale, lags, None)
        inverse = np.linalg.inv(a.T @ a + ridge * np.eye(a.shape[1]))
        residuals = inverse[:, :n] / np.diag(inverse)[:n]
        errors = ((a @ residuals) ** 2)[lags:]
        spread = errors.std(axis=0)
        return cls(mean, scale, residuals, lags, columns, errors.mean(axis=0),
                   np.where(spread > 1e-12, spread, 1.0))  # fmt: skip

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {
            "mean": self.mean,
            "scale": self.scale,
            "residuals": self.residuals,
            "lags": np.asarray(self.lags, dtype=np.int64),
            "columns": np.asarray(self.columns, dtype=np.int64),
            "error_mean": self.error_mean,
            "error_scale": self.error_scale,
        }

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> CrossResidual:
        return cls(
            arrays["mean"],
            arrays["scale"],
            arrays["residuals"],
            int(arrays["lags"]),
            arrays["columns"],
            arrays["error_mean"],
            arrays["error_scale"],
        )

    def values(
        self, rows: np.ndarray, history: np.ndarray | None = None, first_step: int = 0
    ) -> np.ndarray:
        """Per step, the mean of the columns' standardised squared residuals; ``history``: the
        ``lags`` standardised rows before ``rows`` (None: a series' start); ``first_step``: the
        step of ``rows[0]``. A series' first ``lags`` steps have no full history: they take 0
        (the training mean: no evidence either way), as the next-step part's do."""
        if len(self.columns) < 2:
            return np.zeros(len(rows))
        errors = (_regressors(self.standardise(rows), self.lags, history) @ self.residuals) ** 2
        values = ((errors - self.error_mean) / self.error_scale).mean(axis=1)
        if first_step < self.lags:
            values[: self.lags - first_step] = 0.0
        return values

    def standardise(self, rows: np.ndarray) -> np.ndarray:
        """The predicted columns of ``rows``, standardised as the fit read them."""
        return (np.asarray(rows, dtype=np.float64)[:, self.columns] - self.mean) / self.scale

    def describe(self) -> str:
        return f"same-step residual of {len(self.columns)} columns"

    def stream(self) -> AutoRegressiveStream:
        # the same state as the next-step part's: the last ``lags`` standardised rows
        return AutoRegressiveStream(self)  # type: ignore[arg-type]


def _regressors(z: np.ndarray, lags: int, history: np.ndarray | None) -> np.ndarray:
    """Rows ``[z_t, z_{t-1}, ..., z_{t-lags}, 1]``: the row itself first (its columns are the
    ones each residual leaves out in turn), then :func:`lagged`'s."""
    return np.hstack([z, lagged(z, lags, history)])


__all__ = ["CrossResidual"]
