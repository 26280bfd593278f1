"""Scoring an exported ``.onnx`` file with onnxruntime and numpy alone (no torch, no training code).

The file (written by :func:`madcluster.estimator.export.export_onnx`) holds the graph, which scores
model-input windows, and under :data:`METADATA_KEY` what maps rows to windows and window steps back
to one score per row (scaling, constant columns, the window grid, warm-up calibration, threshold)
and, for a model with input terms (the default), the terms' arrays, statistics and weights, which
are added here with the same numpy functions as ``decision_function`` uses::

    from madcluster import OnnxScorer

    scorer = OnnxScorer("model.onnx")           # onnxruntime + numpy
    scores = scorer.decision_function(X)        # one score per row, as MADCluster.decision_function
    flags = scores > scorer.threshold_
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from madcluster.data.window_grid import (
    causal_window_of,
    window_starts,
    windows_to_points,
    windows_to_points_with_history,
)
from madcluster.estimator.far_columns import warn_far_columns
from madcluster.estimator.inputs import InputSpec
from madcluster.estimator.warmup import Warmup
from madcluster.exceptions import DataError, ModelFileError

METADATA_KEY = "madcluster.scoring"
METADATA_VERSION = 2  # 2: the combination as a model file writes it (1: input_terms, format 2 keys)
SCORING_BATCH = 256  # windows per onnxruntime call


class OnnxScorer:
    """Scores rows with an exported ``.onnx`` file, onnxruntime and numpy: one score per row, as
    ``MADCluster.decision_function`` gives (to ~1e-12: both float64), warm-up calibration included.

    For a machine without torch: ``OnnxScorer("model.onnx").decision_function(X)``, ``predict(X)``
    (0/1 flags, score > ``threshold_``); ``X`` is a ``(T, D)`` array or a DataFrame (columns
    matched by name when the model recorded names), at least one window of rows.
    """

    def __init__(self, path: str | os.PathLike) -> None:
        try:
            import onnxruntime
        except ImportError as exc:
            raise ImportError(
                f"scoring an ONNX file needs onnxruntime: pip install onnxruntime ({exc})"
            ) from None
        self.path = Path(path)
        if not self.path.is_file():
            raise ModelFileError(f"ONNX file {str(self.path)!r} does not exist")
        try:
            self.session = onnxruntime.InferenceSession(
                os.fspath(self.path), providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # noqa: BLE001 - onnxruntime's errors are of its own types
            raise ModelFileError(
                f"{str(self.path)!r} is not a readable ONNX file: {str(exc).splitlines()[0][:200]}"
            ) from None
        meta = self.session.get_modelmeta().custom_metadata_map.get(METADATA_KEY)
        if meta is None:
            raise ModelFileError(
                f"{str(self.path)!r} has no {METADATA_KEY} metadata: export it again with "
                "`madcluster export`"
            )
        self.metadata: dict[str, Any] = json.loads(meta)
        m = self.metadata
        self.window_size: int = m["window_size"]
        self.n_features_in_: int = m["n_features"]
        self.feature_names_in_: np.ndarray | None = (
            None if m["feature_names"] is None else np.asarray(m["feature_names"], dtype=object)
        )
        self.threshold_: float = m["threshold"]
        # the fitted model's checks and scaling, from its inputs' record (exports from before
        # the record was whole lack the fewest rows, one window, and the scaling's kind)
        self.inputs = InputSpec.from_record({"min_rows": self.window_size, "scaling": "", **m})
        table = m["warmup_quantiles"]  # the fitted model's warm-up, from its settings and table
        self.warmup = Warmup(
            self.window_size,
            m["score_stride"],
            m["causal"],
            None if table is None else np.asarray(table, dtype=np.float64),
        )
        self._terms = _read_input_terms(m, self.path)

    def decision_function(self, X: Any) -> np.ndarray:
        """Anomaly score per row of ``X`` ``(T,)``, float64, higher = more anomalous."""
        m = self.metadata
        rows = self.inputs.check_rows(X)
        if self.inputs.scaling:  # columns far outside their training range: named, as the model's
            warn_far_columns(self.inputs, self.inputs.scaling, X)
        series = self.inputs.model_input(rows)
        if m["causal"]:
            scores, positions = self._causal_scores(series)
        else:
            scores, positions = self._averaged_scores(series), None
        if positions is not None:
            scores = self.warmup.calibrate(scores, positions)
        if self._terms is not None:
            scores = self._terms.score(rows, scores)
        if not np.all(np.isfinite(scores)):
            raise DataError(
                "the model produced non-finite scores: the input may be far outside the training "
                "range"
            )
        return scores

    def predict(self, X: Any) -> np.ndarray:
        """0/1 per row: score above ``threshold_``."""
        return (self.decision_function(X) > self.threshold_).astype(np.int64)

    def window_scores(self, windows: np.ndarray) -> np.ndarray:
        """The graph's step scores ``[N, L]`` of model-input ``windows [N, L, width]``."""
        parts = [
            self.session.run(
                ["scores"],
                {"windows": np.ascontiguousarray(windows[i : i + SCORING_BATCH], dtype=np.float32)},
            )[0]
            for i in range(0, len(windows), SCORING_BATCH)
        ]
        return np.concatenate(parts).astype(np.float64)

    def _causal_scores(self, series: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each step's score from its window on the fixed causal grid (the one where it has the
        most history), and its position in that window (for the warm-up calibration)."""
        steps = np.arange(len(series))
        windows = causal_window_of(steps, self.window_size, self.metadata["score_stride"])
        starts = np.unique(windows)
        values = self.window_scores(_gather(series, starts, self.window_size))
        positions = self.warmup.positions(steps)  # steps - windows
        return values[np.searchsorted(starts, windows), positions], positions

    def _averaged_scores(self, series: np.ndarray) -> np.ndarray:
        """Models off the causal grid: each step's score averaged over the windows that cover it,
        or, where the embedder is causal (window-level scores of a D-RNN), taken from the covering
        window in which it has the most history, as ``decision_function`` takes it (exports from
        before the key: averaged)."""
        n, size, stride = len(series), self.window_size, self.metadata["score_stride"]
        starts = window_starts(n, size, stride)
        values = self.window_scores(_gather(series, starts, size))
        if self.metadata.get("embedder_causal", False):
            return windows_to_points_with_history(values, starts, n)
        return windows_to_points(values, starts, n)


def _read_input_terms(meta: dict[str, Any], path: Path) -> Any:
    """The :class:`~madcluster.score.combination.Combination` that
    :func:`~madcluster.estimator.onnx_metadata.input_terms_metadata` wrote (version 1: its
    ``input_terms`` entry, read as a format 2 model file's; None: the graph's score alone)."""
    from madcluster.score.schema import combination_from, format2_record

    entry = meta.get("combination", meta.get("input_terms"))
    if entry is None:
        return None
    try:
        arrays = {
            k: np.asarray(v["values"], dtype=v["dtype"]).reshape(v["shape"])
            for k, v in entry["arrays"].items()
        }
        if "combination" not in meta:  # version 1
            _, entry = format2_record(
                tuple(entry["names"]),
                entry["stats"],
                entry["weights"],
                entry.get("smoothing", {}),
                arrays,
            )  # before smoothing: none
        return combination_from(entry, arrays)
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelFileError(
            f"{str(path)!r}: its input terms metadata is unreadable ({exc}): export it again"
        ) from None


def _gather(series: np.ndarray, starts: np.ndarray, size: int) -> np.ndarray:
    """Windows ``[N, L, width]`` at ``starts``, the series padded with its last row past its end
    (as the torch path pads: a causal model never reads the padding for real steps)."""
    missing = int(starts[-1]) + size - len(series)
    if missing > 0:
        series = np.concatenate([series, np.repeat(series[-1:], missing, axis=0)])
    return series[starts[:, None] + np.arange(size)[None, :]]


__all__ = ["METADATA_KEY", "METADATA_VERSION", "OnnxScorer"]
