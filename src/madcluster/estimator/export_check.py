"""What the ONNX export checks before it writes a file: the graph against the model's own torch
scoring window by window, then the file against ``decision_function`` row by row
(:func:`check_export`; :func:`~madcluster.estimator.export.export_onnx` renames the file into
place only when both pass).

Windows: every step score of 64 probe windows, onnxruntime against the model's torch scoring
network, within ``ATOL + RTOL |score|`` (:data:`TOLERANCE`, by the graph's dtype; a float32 graph
of a float64 model also within :data:`FLOAT32_FACTOR` times torch's own float32 network's gap).

Rows: a probe series several windows long (its length off the stride) scored whole by
:class:`~madcluster.estimator.onnx_scorer.OnnxScorer` on the file and by the model's own
``decision_function``, so what the scorer does around the graph (rows to windows, window steps
back to one score per row, warm-up calibration, input terms) is checked too: the per-window check
alone passed a file whose scorer averaged the windows of a causal embedder's window-level scores
where ``decision_function`` reads one window, rows up to 1.4 off. A row's score is a step score,
or a mean of them, plus input terms computed the same way on both sides, so a row may differ by the
largest step allowance plus ``ATOL + RTOL |row score|``.

The torch side (``WindowScores``, :func:`model_windows`) is here too, built on first use so that
importing this module needs no torch.
"""

from __future__ import annotations

import os
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from madcluster.exceptions import FarFromTrainingWarning, MADClusterError

if TYPE_CHECKING:
    from madcluster.estimator.fitted import FittedModel, ScoringGrid

# the check: |onnxruntime - torch| <= ATOL + RTOL * |score| for every probe step, (ATOL, RTOL) by
# the graph's dtype; float64 measured: 2e-12 at most on a 20-epoch model (docs/export.md)
TOLERANCE = {"float64": (1e-8, 1e-8), "float32": (1e-4, 1e-5)}
# a float32 graph (a layer onnxruntime runs in float32 only, e.g. Conv) of a float64 model may be
# this many times as far from the model as torch's own float32 network is
FLOAT32_FACTOR = 4.0
PROBE_WINDOWS = 64  # the window check's probe windows
ROW_PROBE_WINDOWS = 6  # the row check's probe series: this many windows' rows, and one or two


class ExportError(MADClusterError):
    """The model cannot be exported to ONNX, or onnxruntime disagrees with torch."""


def window_scores_class() -> type:
    """``WindowScores``, built on first use so that importing this module needs no torch."""
    from torch import nn

    from madcluster.estimator.fitted import scoring_dtype

    class WindowScores(nn.Module):
        """A fitted model's per-step window score as a pure tensor function (what the graph
        holds)."""

        def __init__(self, model: FittedModel, dtype: Any = None) -> None:
            """``dtype``: the model's scoring dtype (default), or float32: the trained network as it
            is."""
            super().__init__()
            self.dtype = scoring_dtype(model) if dtype is None else dtype
            self.net = model.scoring_net if self.dtype == scoring_dtype(model) else model.net
            self.head = model.head

        def forward(self, windows: Any) -> Any:
            """Step scores ``[B, L]`` of float32 ``windows``, computed in ``dtype``."""
            return self.head.combine_tensors(self.net.score(windows.to(self.dtype)))

    return WindowScores


def __getattr__(name: str) -> Any:
    if name == "WindowScores":
        cls = window_scores_class()
        globals()["WindowScores"] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def model_windows(model: FittedModel, X: Any) -> tuple[np.ndarray, np.ndarray]:
    """The windows ``[N, L, width]`` (float32 model input) that ``decision_function`` scores for
    ``X`` and their start rows: the input of the ONNX graph."""
    import torch

    from madcluster.data.windows import (
        causal_window_of,
        gather_windows,
        pad_for_windows,
        window_starts,
    )

    grid = model.grid
    series = torch.from_numpy(model.inputs.checked_input(X))
    if grid.causal:
        starts = np.unique(
            causal_window_of(np.arange(len(series)), grid.window_size, grid.score_stride)
        )
    else:
        starts = window_starts(len(series), grid.window_size, grid.score_stride)
    windows = gather_windows(
        pad_for_windows(series, starts, grid.window_size), starts, grid.window_size
    )
    return windows.numpy(), starts


def probe_series(detector: FittedModel, n_rows: int | None = None) -> np.ndarray:
    """Rows around the training data's scale (a seeded draw), at least ``n_rows`` and two
    windows."""
    rng = np.random.default_rng(0)
    n = max(n_rows or 0, 2 * detector.grid.window_size)
    d, inputs = detector.inputs.n_features, detector.inputs
    return (inputs.scaler_mean[:d] + inputs.scaler_scale[:d] * rng.standard_normal((n, d))).astype(
        np.float32
    )


def row_probe_length(grid: ScoringGrid) -> int:
    """:data:`ROW_PROBE_WINDOWS` windows' rows and one more, or two where that would be a
    multiple of the stride: the last window then overlaps the one before it off the grid."""
    n = ROW_PROBE_WINDOWS * grid.window_size + 1
    return n + 1 if grid.score_stride > 1 and n % grid.score_stride == 0 else n


def check_export(
    detector: FittedModel, path: str | os.PathLike, graph_dtype: Any = None
) -> dict[str, Any]:
    """Compare the file at ``path`` (its graph computing in ``graph_dtype``, default the model's
    scoring dtype) with the model: window by window (:data:`PROBE_WINDOWS` probe windows, every
    step, within :data:`TOLERANCE`), then row by row (:func:`check_rows`). ``ExportError`` when
    either differs by more than its tolerance, else the numbers of both."""
    numbers, step_allowed, tolerance = _check_windows(detector, path, graph_dtype)
    return {**numbers, **check_rows(detector, path, step_allowed, tolerance)}


def _check_windows(
    detector: FittedModel, path: str | os.PathLike, graph_dtype: Any
) -> tuple[dict[str, Any], float, tuple[float, float]]:
    """The window check's numbers, its largest allowance and its ``(ATOL, RTOL)``. A float32
    graph of a float64 model may also be :data:`FLOAT32_FACTOR` times as far as torch's own
    float32 network is."""
    import torch

    from madcluster.embedders import embedder_name
    from madcluster.estimator.fitted import scoring_dtype

    probe = probe_series(detector, PROBE_WINDOWS * detector.grid.window_size)
    windows = model_windows(detector, probe)[0][:PROBE_WINDOWS]
    got, expected = run_both(detector, path, windows)
    model_dtype = str(scoring_dtype(detector)).removeprefix("torch.")
    dtype = model_dtype if graph_dtype is None else str(graph_dtype).removeprefix("torch.")
    atol, rtol = TOLERANCE[dtype]
    diff = np.abs(got - expected)
    allowed = atol + rtol * np.abs(expected)
    tolerance = f"{atol:.0e} + {rtol:.0e} |score|"
    if dtype != model_dtype:
        with torch.no_grad():
            own = (
                window_scores_class()(detector, torch.float32)
                .eval()(torch.from_numpy(windows))
                .double()
                .numpy()
            )
        gap = float(np.abs(own - expected).max())
        allowed = np.maximum(allowed, FLOAT32_FACTOR * gap)
        tolerance += f" or {FLOAT32_FACTOR:g} x torch float32's own {gap:.1e}"
    compared = (
        f"{expected.size} step scores of {len(windows)} probe windows, onnxruntime {dtype} vs "
        f"torch {model_dtype}"
    )
    numbers = {
        "max_abs_diff": float(diff.max()),
        "max_rel_diff": float((diff / np.maximum(np.abs(expected), 1.0)).max()),
        "tolerance": tolerance,
        "compared": compared,
    }
    if np.any(diff > allowed):
        raise ExportError(
            f"{embedder_name(detector.net.embedder)}: onnxruntime scores differ from torch "
            f"{model_dtype} by up to "
            f"{diff.max():.2e}, over the tolerance {tolerance} ({compared}): not written"
        )
    return numbers, float(allowed.max()), (atol, rtol)


def check_rows(
    detector: FittedModel,
    path: str | os.PathLike,
    step_allowed: float,
    tolerance: tuple[float, float],
) -> dict[str, Any]:
    """Score a probe series of :func:`row_probe_length` rows with :class:`OnnxScorer` on the file
    at ``path`` and with the model's ``decision_function``; ``ExportError`` when a row differs by
    more than ``step_allowed`` (the window check's largest allowance) ``+ ATOL + RTOL |row
    score|`` (``tolerance``), else the numbers."""
    from madcluster.embedders import embedder_name
    from madcluster.estimator.onnx_scorer import OnnxScorer

    rows = probe_series(detector, row_probe_length(detector.grid))
    with warnings.catch_warnings():  # far columns: of the seeded draw, not of anyone's data
        warnings.simplefilter("ignore", FarFromTrainingWarning)
        got = OnnxScorer(path).decision_function(rows)
    expected = detector.decision_function(rows)
    atol, rtol = tolerance
    diff = np.abs(got - expected)
    over = diff > step_allowed + atol + rtol * np.abs(expected)
    numbers = {
        "rows_max_abs_diff": float(diff.max()),
        "rows_tolerance": f"{step_allowed:.1e} (the largest step allowance) + {atol:.0e} + "
        f"{rtol:.0e} |row score|",
        "rows_compared": f"{len(rows)} rows of a probe series scored whole, OnnxScorer on the "
        "file vs decision_function",
    }
    if np.any(over):
        row = int(np.argmax(diff))
        raise ExportError(
            f"{embedder_name(detector.net.embedder)}: the whole-row comparison failed: the file's "
            f"row scores differ from decision_function's by up to {diff[row]:.2e} (row {row} of "
            f"{len(rows)}, {int(over.sum())} rows over), over the tolerance "
            f"{numbers['rows_tolerance']} (the window check passed): not written"
        )
    return numbers


def run_both(
    model: FittedModel, path: str | os.PathLike, windows: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per-step scores of ``windows`` from onnxruntime (the graph at ``path``) and from torch
    (the fitted ``model``)."""
    import onnxruntime
    import torch

    session = onnxruntime.InferenceSession(os.fspath(path), providers=["CPUExecutionProvider"])
    got = session.run(["scores"], {"windows": windows})[0].astype(np.float64)
    with torch.no_grad():
        expected = window_scores_class()(model).eval()(torch.from_numpy(windows)).double().numpy()
    return got, expected


__all__ = [
    "FLOAT32_FACTOR",
    "TOLERANCE",
    "ExportError",
    # built on first use by the module __getattr__ (no torch at import)
    "WindowScores",  # noqa: F822
    "check_export",
    "check_rows",
    "model_windows",
    "probe_series",
    "row_probe_length",
    "run_both",
    "window_scores_class",
]
