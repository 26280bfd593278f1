"""What a fitted model reads: the training columns, their scaling and the checks rows pass
before scoring (:class:`InputSpec`), kept beside the fitted model rather than inside its score.

Its record (:meth:`InputSpec.to_record`, :meth:`InputSpec.from_record`) is the one both a model
file and an ONNX file's metadata write: the same keys, the arrays as each writes arrays."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from madcluster.data.constant_columns import (
    bound_constant_columns,
    constant_columns,
    warn_constant_at_fit,
)
from madcluster.data.scaling import fit_input_scaler, model_input
from madcluster.data.validation import align_columns, check_series


@dataclass(frozen=True, eq=False)
class InputSpec:
    """The training columns (count, names, the constant ones), the input scaling fitted on them,
    the roughness channels' window, and the fewest rows a series needs (one window)."""

    scaler_mean: np.ndarray
    scaler_scale: np.ndarray
    roughness_window: int
    n_features: int
    feature_names: np.ndarray | None
    constant_columns: np.ndarray
    min_rows: int
    scaling: str = "standard"  # the scaler's kind (``standard`` or ``minmax``)

    @classmethod
    def fit(
        cls,
        data: np.ndarray,
        scaling: str,
        roughness_window: int,
        feature_names: np.ndarray | None,
        min_rows: int,
    ) -> InputSpec:
        """The input scaling (``scaling``: ``standard`` or ``minmax``) and the constant columns of
        checked training rows ``data``; a constant column is named in a warning once, here."""
        mean, scale = fit_input_scaler(data, scaling, roughness_window)
        constant = constant_columns(data)
        warn_constant_at_fit(constant, mean, feature_names)
        return cls(
            mean, scale, roughness_window, data.shape[1], feature_names, constant, min_rows, scaling
        )

    def to_record(self) -> dict[str, Any]:
        """The spec as one record: JSON values, and the scaler's two float64 arrays."""
        names = self.feature_names
        return {
            "n_features": int(self.n_features),
            "feature_names": None if names is None else [str(n) for n in names],
            "constant_columns": [int(j) for j in self.constant_columns],
            "roughness_window": int(self.roughness_window),
            "min_rows": int(self.min_rows),
            "scaling": self.scaling,
            "scaler_mean": np.asarray(self.scaler_mean, dtype=np.float64),
            "scaler_scale": np.asarray(self.scaler_scale, dtype=np.float64),
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> InputSpec:
        """The spec :meth:`to_record` wrote (arrays as arrays or lists)."""
        names = record["feature_names"]  # None: trained on an array, not named columns
        return cls(
            np.asarray(record["scaler_mean"], dtype=np.float64),
            np.asarray(record["scaler_scale"], dtype=np.float64),
            int(record["roughness_window"]),
            int(record["n_features"]),
            None if names is None else np.asarray(names, dtype=object),
            np.asarray(record["constant_columns"], dtype=np.int64),
            int(record["min_rows"]),
            str(record["scaling"]),
        )

    def check_rows(self, X: Any, min_length: int | None = None, name: str = "X") -> np.ndarray:
        """``X`` as a float32 ``(T, D)`` array in the training column order (a DataFrame's columns
        matched by name), at least ``min_length`` rows (default: one window), or a ``DataError``;
        the constant training columns replaced by their steps (:meth:`bound_constant_columns`)."""
        return self.bound_constant_columns(self.validate_rows(X, min_length, name))

    def validate_rows(self, X: Any, min_length: int | None = None, name: str = "X") -> np.ndarray:
        """:meth:`check_rows` before the constant training columns are replaced by their steps."""
        length = self.min_rows if min_length is None else min_length
        aligned = align_columns(X, self.feature_names, name="X")
        return check_series(
            aligned, min_length=length, n_features=self.n_features, name=name,
            names=self.feature_names,
        )  # fmt: skip

    def bound_constant_columns(
        self,
        rows: np.ndarray,
        previous_row: np.ndarray | None = None,
        warned: set[int] | None = None,
    ) -> np.ndarray:
        """Validated ``rows`` with each column constant in training replaced by its training value
        plus its step from the previous row (``previous_row`` before the first row; None: the
        training value), as :mod:`madcluster.data.constant_columns` explains (``warned``: its
        columns already named)."""
        return bound_constant_columns(
            rows, self.constant_columns, self.scaler_mean, self.feature_names, previous_row, warned
        )

    def model_input(self, rows: np.ndarray) -> np.ndarray:
        """Checked ``rows`` as the network's input (scaled, roughness channels added)."""
        return model_input(rows, self.scaler_mean, self.scaler_scale, self.roughness_window)

    def checked_input(self, X: Any) -> np.ndarray:
        """``X`` checked against the training columns, as the network's input."""
        return self.model_input(self.check_rows(X))


__all__ = ["InputSpec"]
