"""ONNX export: a fitted model's scoring network as one graph.

The graph takes a batch of model-input windows ``windows [batch, window_size, width]`` (the
scaled rows, plus the roughness channels where the model has them: :meth:`FittedModel.model_windows
<madcluster.estimator.fitted.FittedModel.model_windows>` builds them) and returns ``scores [batch,
window_size]``: every window step's score, the base and head terms standardised and summed exactly
as ``decision_function`` does before it maps windows back to rows. Scaling and the warm-up
calibration stay outside the graph (numpy, cheap).

torch 2.13's default exporter (``dynamo=True``) needs ``onnxscript``; the TorchScript exporter
(``dynamo=False``) needs nothing more and handles every layer used here, so it is the one used.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import torch
from torch import nn

from madcluster.atomic import atomic_path
from madcluster.estimator.fitted import FittedModel, fitted_model
from madcluster.exceptions import MADClusterError

OPSET = 17
# |onnxruntime - torch| <= ATOL + RTOL * |torch|: both run float32, and a score of 100 has a float32
# spacing of 8e-6, so far-out scores get the relative part.
ATOL, RTOL = 1e-4, 1e-5


class ExportError(MADClusterError):
    """The model cannot be exported to ONNX, or onnxruntime disagrees with torch."""


class WindowScores(nn.Module):
    """A fitted model's per-step window score as a pure tensor function (what the graph holds)."""

    def __init__(self, model: FittedModel) -> None:
        super().__init__()
        self.net = model.net
        self.parts = model.parts

    def forward(self, windows: torch.Tensor) -> torch.Tensor:
        return self.parts.combine_tensors(self.net.score(windows))


def export_onnx(model: Any, path: str | os.PathLike, check: bool = True) -> dict[str, Any]:
    """Write ``model`` (a fitted MADCluster or its :class:`FittedModel`) as an ONNX graph to
    ``path`` (atomically); with ``check``, score a window batch with onnxruntime and torch and
    raise ``ExportError`` if they differ by > 1e-4."""
    model = fitted_model(model)
    try:
        import onnx  # noqa: F401 - the exporter needs it
    except ImportError as exc:
        raise ImportError(f"ONNX export needs the onnx extra: pip install \"madcluster[onnx]\" ({exc})") from None
    if model.parts.input_terms:
        names = tuple(term.name for term in model.parts.input_terms)
        raise ExportError(f"{model.name} has input_terms={names!r}, which score whole series, not "
                          "windows: it does not export to ONNX (fit with --preset streaming, i.e. input_terms=None, to export)")
    module = WindowScores(model).eval()
    windows = torch.from_numpy(model.model_windows(_probe_series(model))[0][:8])
    try:
        with atomic_path(path) as tmp, torch.no_grad():
            torch.onnx.export(
                module, (windows,), str(tmp), input_names=["windows"], output_names=["scores"],
                dynamic_axes={"windows": {0: "batch"}, "scores": {0: "batch"}}, opset_version=OPSET, dynamo=False,
            )
    except MADClusterError:
        raise
    except Exception as exc:  # noqa: BLE001 - the exporter fails in many ways; name the model and why
        raise ExportError(f"{model.name} does not export to ONNX: {_reason(exc)}") from None
    report: dict[str, Any] = {"input": "windows", "input_shape": ["batch", model.window_size, windows.shape[-1]], "output": "scores", "max_abs_diff": None}
    if check:
        got, expected = run_both(model, path, model.model_windows(_probe_series(model, 64 * model.window_size))[0][:64])
        report["max_abs_diff"] = float(np.abs(got - expected).max())
        if not np.allclose(got, expected, atol=ATOL, rtol=RTOL):
            raise ExportError(f"{model.name}: onnxruntime scores differ from torch by up to {report['max_abs_diff']:.2e} (atol {ATOL}, rtol {RTOL})")
    return report


def run_both(model: Any, path: str | os.PathLike, windows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-step scores of ``windows`` from onnxruntime (the graph at ``path``) and from torch
    (``model``: a fitted MADCluster or its :class:`FittedModel`)."""
    model = fitted_model(model)
    import onnxruntime

    session = onnxruntime.InferenceSession(os.fspath(path), providers=["CPUExecutionProvider"])
    got = session.run(["scores"], {"windows": windows})[0].astype(np.float64)
    with torch.no_grad():
        expected = WindowScores(model).eval()(torch.from_numpy(windows)).double().numpy()
    return got, expected


def _probe_series(model: FittedModel, n_rows: int | None = None) -> np.ndarray:
    """Rows around the training data's scale (a seeded draw), enough for the probe windows."""
    rng = np.random.default_rng(0)
    n = max(n_rows or 0, 2 * model.window_size)
    d = model.n_features
    return (model.scaler_mean[:d] + model.scaler_scale[:d] * rng.standard_normal((n, d))).astype(np.float32)


def _reason(exc: Exception) -> str:
    """The exporter's error in one line, with the cause spelled out where we know it."""
    text = str(exc)
    if "Generator" in text:
        return "its score draws Monte Carlo noise from a seeded torch.Generator, which an ONNX graph cannot hold"
    return f"{type(exc).__name__}: {text.splitlines()[0][:300] if text else ''}"


__all__ = ["ExportError", "WindowScores", "export_onnx", "run_both"]
