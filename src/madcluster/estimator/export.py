"""ONNX export of a fitted model, and :class:`OnnxScorer`, which scores rows with the exported
file and numpy alone (no torch).

The graph takes a batch of model-input windows ``windows [batch, window_size, width]`` (the scaled
rows, plus the roughness channels where the model has them) and returns ``scores [batch,
window_size]``: every window step's score, the base and head terms standardised and summed exactly
as ``decision_function`` does before it maps windows back to rows. What turns rows into windows
and window steps back into one score per row (scaling, the constant training columns, the window
grid, the warm-up calibration, the threshold) is written into the file's ``metadata_props`` under
:data:`METADATA_KEY` as JSON, so :class:`OnnxScorer` needs only the ``.onnx`` file::

    from madcluster import OnnxScorer          # or madcluster.estimator.export

    scorer = OnnxScorer("model.onnx")           # onnxruntime + numpy
    scores = scorer.decision_function(X)        # one score per row, as MADCluster.decision_function
    flags = scores > scorer.threshold_

The export check compares onnxruntime with torch on probe windows. Both run float32, and a
trained model's standardised terms amplify float32 rounding (a term with a training std of 1e-4
turns a 1e-7 rounding step into 1e-3), so a fixed 1e-4 fails trained models although onnxruntime is
as exact as torch. The check therefore also runs the network in float64 and accepts onnxruntime
when it is no further from float64 than a few times torch float32's own distance from it (and
always within 1e-4 + 1e-5 |score|).

torch 2.13's default exporter (``dynamo=True``) needs ``onnxscript``; the TorchScript exporter
(``dynamo=False``) needs nothing more and handles every layer used here, so it is the one used.
"""

from __future__ import annotations

import copy
import json
import os
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from madcluster.atomic import atomic_path
from madcluster.exceptions import DataError, MADClusterError, ModelFileError

if TYPE_CHECKING:
    from madcluster.estimator.fitted import FittedModel

OPSET = 17
# the floor of the check: |onnxruntime - torch float64| <= ATOL + RTOL * |score| always passes
ATOL, RTOL = 1e-4, 1e-5
# ... and beyond it, onnxruntime may be this many times as far from float64 as torch float32 is
FLOAT32_FACTOR = 4.0
METADATA_KEY = "madcluster.scoring"
METADATA_VERSION = 1
SCORING_BATCH = 256  # windows per onnxruntime call in OnnxScorer


class ExportError(MADClusterError):
    """The model cannot be exported to ONNX, or onnxruntime disagrees with torch."""


def _window_scores_class() -> type:
    """``WindowScores``, built on first use so that importing this module needs no torch."""
    from torch import nn

    class WindowScores(nn.Module):
        """A fitted model's per-step window score as a pure tensor function (what the graph holds)."""

        def __init__(self, model: FittedModel) -> None:
            super().__init__()
            self.net = model.net
            self.parts = model.parts

        def forward(self, windows: Any) -> Any:
            return self.parts.combine_tensors(self.net.score(windows))

    return WindowScores


def __getattr__(name: str) -> Any:
    if name == "WindowScores":
        cls = _window_scores_class()
        globals()["WindowScores"] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def export_onnx(model: Any, path: str | os.PathLike, check: bool = True) -> dict[str, Any]:
    """Write ``model`` (a fitted MADCluster or its :class:`FittedModel`) as an ONNX graph to
    ``path``, with what :class:`OnnxScorer` needs in its metadata; with ``check``, score probe
    windows with onnxruntime, torch float32 and torch float64 and raise ``ExportError`` when
    onnxruntime is off (the module docstring says how far). The file appears only once written
    and checked: a failed export leaves nothing at ``path``."""
    try:
        import onnx
    except ImportError as exc:
        raise ImportError(f"ONNX export needs the onnx extra: pip install \"madcluster[onnx]\" ({exc})") from None
    import torch

    from madcluster.estimator.fitted import fitted_model

    detector = fitted_model(model)
    if detector.parts.input_terms:
        names = tuple(term.name for term in detector.parts.input_terms)
        raise ExportError(f"{detector.name} has input_terms={names!r}, which score whole series, not "
                          "windows: it does not export to ONNX (fit with --preset streaming, i.e. input_terms=None, to export)")
    module = _window_scores_class()(detector).eval()
    windows = torch.from_numpy(detector.model_windows(_probe_series(detector))[0][:8])
    report: dict[str, Any] = {
        "input": "windows", "input_shape": ["batch", detector.window_size, int(windows.shape[-1])], "output": "scores",
        "max_abs_diff": None, "float32_gap": None, "float64_diff": None, "tolerance": None,
    }
    with atomic_path(path) as tmp:
        try:
            # the tracer's warnings (Python branches traced as constants, GRU batch sizes) are about
            # graphs that could differ from torch on other inputs: the check below scores other
            # inputs, at another batch size, and refuses a graph that differs
            with torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore", category=torch.jit.TracerWarning)
                warnings.filterwarnings("ignore", message=".*batch_size other than 1.*")
                torch.onnx.export(
                    module, (windows,), str(tmp), input_names=["windows"], output_names=["scores"],
                    dynamic_axes={"windows": {0: "batch"}, "scores": {0: "batch"}}, opset_version=OPSET, dynamo=False,
                )
            graph = onnx.load(str(tmp))
            entry = graph.metadata_props.add()
            entry.key, entry.value = METADATA_KEY, json.dumps(scoring_metadata(detector))
            onnx.save(graph, str(tmp))
        except MADClusterError:
            raise
        except Exception as exc:  # noqa: BLE001 - the exporter fails in many ways; name the model and why
            raise ExportError(f"{_name(detector)} does not export to ONNX: {_reason(exc)}") from None
        if check:
            report.update(check_export(detector, tmp))
    return report


def check_export(detector: FittedModel, path: str | os.PathLike) -> dict[str, Any]:
    """Compare the graph at ``path`` with torch on 64 probe windows; ``ExportError`` when
    onnxruntime is further from float64 than the tolerance (module docstring), else the numbers."""
    windows = detector.model_windows(_probe_series(detector, 64 * detector.window_size))[0][:64]
    got, expected = run_both(detector, path, windows)
    exact = _float64_scores(detector, windows)
    gap = None if exact is None else float(np.abs(expected - exact).max())
    reference = expected if exact is None else exact
    diff = np.abs(got - reference)
    floor = ATOL + RTOL * np.abs(reference)
    allowed = np.maximum(floor, FLOAT32_FACTOR * gap) if gap is not None else floor
    numbers = {
        "max_abs_diff": float(np.abs(got - expected).max()), "float32_gap": gap,
        "float64_diff": None if exact is None else float(diff.max()), "tolerance": float(allowed.max()),
    }
    if np.any(diff > allowed):
        against = "torch float64" if exact is not None else "torch float32"
        raise ExportError(
            f"{_name(detector)}: onnxruntime scores differ from {against} by up to {diff.max():.2e}, over the "
            f"tolerance {allowed.max():.2e} (torch float32 itself is {_num(gap)} from float64): not written"
        )
    return numbers


def run_both(model: Any, path: str | os.PathLike, windows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-step scores of ``windows`` from onnxruntime (the graph at ``path``) and from torch
    (``model``: a fitted MADCluster or its :class:`FittedModel`)."""
    import onnxruntime
    import torch

    from madcluster.estimator.fitted import fitted_model

    detector = fitted_model(model)
    session = onnxruntime.InferenceSession(os.fspath(path), providers=["CPUExecutionProvider"])
    got = session.run(["scores"], {"windows": windows})[0].astype(np.float64)
    with torch.no_grad():
        expected = _window_scores_class()(detector).eval()(torch.from_numpy(windows)).double().numpy()
    return got, expected


def _float64_scores(detector: FittedModel, windows: np.ndarray) -> np.ndarray | None:
    """The same network's scores in float64 (the exact value both float32 runs approximate), or
    None where the model builds float32 tensors inside its forward pass."""
    import torch

    double = copy.copy(detector)
    double.net = copy.deepcopy(detector.net).double()
    try:
        with torch.no_grad():
            return _window_scores_class()(double).eval()(torch.from_numpy(windows).double()).numpy()
    except (RuntimeError, TypeError):
        return None


def scoring_metadata(detector: FittedModel) -> dict[str, Any]:
    """What turns rows into the graph's windows and its step scores into one score per row."""
    table, names = detector.warmup_quantiles, detector.feature_names
    return {
        "version": METADATA_VERSION,
        "n_features": int(detector.n_features),
        "feature_names": None if names is None else [str(n) for n in names],
        "window_size": int(detector.window_size),
        "score_stride": int(detector.score_stride),
        "causal": bool(detector.causal),
        "scaler_mean": np.asarray(detector.scaler_mean, dtype=np.float64).tolist(),
        "scaler_scale": np.asarray(detector.scaler_scale, dtype=np.float64).tolist(),
        "roughness_window": int(detector.roughness_window),
        "constant_columns": np.asarray(detector.constant_columns, dtype=np.int64).tolist(),
        "warmup_quantiles": None if table is None else np.asarray(table, dtype=np.float64).tolist(),
        "warmup_reference_from": int(detector.warmup_reference_from()),
        "threshold": float(detector.threshold),
    }


class OnnxScorer:
    """Scores rows with an exported ``.onnx`` file, onnxruntime and numpy: one score per row, as
    ``MADCluster.decision_function`` gives (float32 rounding apart), warm-up calibration included.

    For a machine without torch: ``OnnxScorer("model.onnx").decision_function(X)``, ``predict(X)``
    (0/1 flags, score > ``threshold_``); ``X`` is a ``(T, D)`` array or a DataFrame (columns
    matched by name when the model recorded names), at least one window of rows.
    """

    def __init__(self, path: str | os.PathLike) -> None:
        try:
            import onnxruntime
        except ImportError as exc:
            raise ImportError(f"scoring an ONNX file needs onnxruntime: pip install onnxruntime ({exc})") from None
        self.path = Path(path)
        if not self.path.is_file():
            raise ModelFileError(f"ONNX file {str(self.path)!r} does not exist")
        try:
            self.session = onnxruntime.InferenceSession(os.fspath(self.path), providers=["CPUExecutionProvider"])
        except Exception as exc:  # noqa: BLE001 - onnxruntime's errors are of its own types
            raise ModelFileError(f"{str(self.path)!r} is not a readable ONNX file: {str(exc).splitlines()[0][:200]}") from None
        meta = self.session.get_modelmeta().custom_metadata_map.get(METADATA_KEY)
        if meta is None:
            raise ModelFileError(f"{str(self.path)!r} has no {METADATA_KEY} metadata: export it again with `madcluster export`")
        self.metadata: dict[str, Any] = json.loads(meta)
        m = self.metadata
        self.window_size: int = m["window_size"]
        self.n_features_in_: int = m["n_features"]
        self.feature_names_in_: np.ndarray | None = None if m["feature_names"] is None else np.asarray(m["feature_names"], dtype=object)
        self.threshold_: float = m["threshold"]
        self._mean = np.asarray(m["scaler_mean"], dtype=np.float64)
        self._scale = np.asarray(m["scaler_scale"], dtype=np.float64)
        self._table = None if m["warmup_quantiles"] is None else np.asarray(m["warmup_quantiles"], dtype=np.float64)

    def decision_function(self, X: Any) -> np.ndarray:
        """Anomaly score per row of ``X`` ``(T,)``, float64, higher = more anomalous."""
        from madcluster.data.constant_columns import bound_constant_columns
        from madcluster.data.scaling import model_input
        from madcluster.data.validation import align_columns, check_series

        m = self.metadata
        rows = check_series(align_columns(X, self.feature_names_in_, name="X"), min_length=self.window_size,
                            n_features=self.n_features_in_, name="X")
        rows = bound_constant_columns(rows, np.asarray(m["constant_columns"], dtype=np.int64), self._mean,
                                      self.feature_names_in_, None)
        series = model_input(rows, self._mean, self._scale, m["roughness_window"])
        if m["causal"]:
            scores, positions = self._causal_scores(series)
        else:
            scores, positions = self._averaged_scores(series), None
        if self._table is not None and positions is not None:
            from madcluster.estimator.warmup import calibrate

            scores = calibrate(scores, positions, self._table, m["warmup_reference_from"])
        if not np.all(np.isfinite(scores)):
            raise DataError("the model produced non-finite scores: the input may be far outside the training range")
        return scores

    def predict(self, X: Any) -> np.ndarray:
        """0/1 per row: score above ``threshold_``."""
        return (self.decision_function(X) > self.threshold_).astype(np.int64)

    def window_scores(self, windows: np.ndarray) -> np.ndarray:
        """The graph's step scores ``[N, L]`` of model-input ``windows [N, L, width]``."""
        parts = [
            self.session.run(["scores"], {"windows": np.ascontiguousarray(windows[i : i + SCORING_BATCH], dtype=np.float32)})[0]
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
        positions = steps - windows
        return values[np.searchsorted(starts, windows), positions], positions

    def _averaged_scores(self, series: np.ndarray) -> np.ndarray:
        """Non-causal models: each step's score averaged over the windows that cover it."""
        n, size, stride = len(series), self.window_size, self.metadata["score_stride"]
        starts = np.arange(0, n - size + 1, stride, dtype=np.int64)
        if starts[-1] != n - size:
            starts = np.append(starts, n - size)
        values = self.window_scores(_gather(series, starts, size))
        positions = (starts[:, None] + np.arange(size)[None, :]).ravel()
        totals = np.bincount(positions, weights=values.ravel(), minlength=n)
        return totals / np.bincount(positions, minlength=n)


def causal_window_of(steps: np.ndarray, window_size: int, stride: int) -> np.ndarray:
    """Start of the window that scores each step, ``max(0, ceil((t - L + 1) / s)) * s``: the
    formula of :func:`madcluster.data.windows.causal_window_of`, here without its torch import."""
    steps = np.asarray(steps, dtype=np.int64)
    return np.maximum(0, -(-(steps - window_size + 1) // stride)) * stride


def _gather(series: np.ndarray, starts: np.ndarray, size: int) -> np.ndarray:
    """Windows ``[N, L, width]`` at ``starts``, the series padded with its last row past its end
    (as the torch path pads: a causal model never reads the padding for real steps)."""
    missing = int(starts[-1]) + size - len(series)
    if missing > 0:
        series = np.concatenate([series, np.repeat(series[-1:], missing, axis=0)])
    return series[starts[:, None] + np.arange(size)[None, :]]


def _probe_series(detector: FittedModel, n_rows: int | None = None) -> np.ndarray:
    """Rows around the training data's scale (a seeded draw), enough for the probe windows."""
    rng = np.random.default_rng(0)
    n = max(n_rows or 0, 2 * detector.window_size)
    d = detector.n_features
    return (detector.scaler_mean[:d] + detector.scaler_scale[:d] * rng.standard_normal((n, d))).astype(np.float32)


def _reason(exc: Exception) -> str:
    """The exporter's error in one line, with the cause spelled out where we know it."""
    text = str(exc)
    if "Generator" in text:
        return "its score draws Monte Carlo noise from a seeded torch.Generator, which an ONNX graph cannot hold"
    return f"{type(exc).__name__}: {text.splitlines()[0][:300] if text else ''}"


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2e}"


def _name(detector: FittedModel) -> str:
    return detector.name


__all__ = [
    "ExportError",
    "OnnxScorer",
    "WindowScores",  # noqa: F822 - built on first use by the module __getattr__ (no torch at import)
    "check_export",
    "export_onnx",
    "run_both",
    "scoring_metadata",
]
