"""ONNX export of a fitted model; :class:`~madcluster.estimator.onnx_scorer.OnnxScorer` scores rows
with the exported file and numpy alone (no torch).

The graph takes a batch of model-input windows ``windows [batch, window_size, width]`` (the scaled
rows, plus the roughness channels where the model has them) and returns ``scores [batch,
window_size]``: every window step's score, the base and head terms standardised and summed exactly
as ``decision_function`` does before it maps windows back to rows. What turns rows into windows
and window steps back into one score per row (scaling, the constant training columns, the window
grid, the warm-up calibration, the threshold; the default's input terms as arrays, with their
statistics and weights) is written into the file's ``metadata_props`` under :data:`METADATA_KEY`
as JSON, so :class:`OnnxScorer` needs only the ``.onnx`` file::

    from madcluster import OnnxScorer          # or madcluster.estimator.onnx_scorer

    scorer = OnnxScorer("model.onnx")           # onnxruntime + numpy
    scores = scorer.decision_function(X)        # one score per row, as MADCluster.decision_function
    flags = scores > scorer.threshold_

The graph computes in float64, as the fitted model scores (:attr:`FittedModel.scoring_net
<madcluster.estimator.fitted.FittedModel.scoring_net>`): its input stays float32 windows and is
cast inside. A trained model's standardised terms amplify rounding about 1e3-fold (a term with a
training std of 1e-4), so in float32 torch and onnxruntime differed by 2e-4 of a score; in float64
they agree to ~1e-12. onnxruntime runs its recurrent operators in float32 only, so recurrent
layers are exported written out step by step (:mod:`madcluster.estimator.onnx_rnn`).

The export check scores 64 probe windows with onnxruntime and with the model's own torch scoring
network (what ``decision_function`` uses) and refuses the graph when any step score differs by more
than ``ATOL + RTOL |score|`` (:data:`TOLERANCE`, by the graph's dtype; a model trained in bfloat16
scores and exports in float32). onnxruntime has no float64 ``Conv`` either: a model with
convolutions (BeatGAN, the attention models' token embeddings) exports as a float32 graph, checked
against the float64 scores within the float32 tolerance or a few times torch's own float32 error,
as before scores were float64.

torch 2.13's default exporter (``dynamo=True``) needs ``onnxscript``; the TorchScript exporter
(``dynamo=False``) needs nothing more and handles every layer used here, so it is the one used.
"""

from __future__ import annotations

import contextlib
import json
import os
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from madcluster.atomic import atomic_path
from madcluster.estimator.onnx_metadata import scoring_metadata
from madcluster.estimator.onnx_scorer import METADATA_KEY
from madcluster.exceptions import MADClusterError

if TYPE_CHECKING:
    from madcluster.estimator.fitted import FittedModel

OPSET = 17
# the check: |onnxruntime - torch| <= ATOL + RTOL * |score| for every probe step, (ATOL, RTOL) by
# the graph's dtype; float64 measured: 2e-12 at most on a 20-epoch model (docs/export.md)
TOLERANCE = {"float64": (1e-8, 1e-8), "float32": (1e-4, 1e-5)}
# a float32 graph (a layer onnxruntime runs in float32 only, e.g. Conv) of a float64 model may be
# this many times as far from the model as torch's own float32 network is
FLOAT32_FACTOR = 4.0


class ExportError(MADClusterError):
    """The model cannot be exported to ONNX, or onnxruntime disagrees with torch."""


def _window_scores_class() -> type:
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
        cls = _window_scores_class()
        globals()["WindowScores"] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def export_onnx(model: FittedModel, path: str | os.PathLike, check: bool = True) -> dict[str, Any]:
    """Write fitted ``model`` (a MADCluster's ``model_``) as an ONNX graph to
    ``path``, with what :class:`OnnxScorer` needs in its metadata; with ``check``, score probe
    windows with onnxruntime and with torch and raise ``ExportError`` when they differ by more
    than :data:`TOLERANCE`. The file appears only once written and checked: a failed export
    leaves nothing at ``path``."""
    try:
        import onnx
    except ImportError as exc:
        raise ImportError(
            f'ONNX export needs the onnx extra: pip install "madcluster[onnx]" ({exc})'
        ) from None
    import torch

    from madcluster.embedders import embedder_name
    from madcluster.estimator.fitted import scoring_dtype
    from madcluster.estimator.onnx_rnn import unrolled

    detector = model
    windows = torch.from_numpy(model_windows(detector, _probe_series(detector))[0][:8])
    dtype = scoring_dtype(detector)
    report: dict[str, Any] = {
        "input": "windows",
        "input_shape": ["batch", detector.grid.window_size, int(windows.shape[-1])],
        "output": "scores",
        "dtype": None,
        "max_abs_diff": None,
        "max_rel_diff": None,
        "tolerance": None,
        "compared": None,
    }
    with atomic_path(path) as tmp:
        try:
            # the tracer's warnings (Python branches traced as constants, GRU batch sizes) are about
            # graphs that could differ from torch on other inputs: the check below scores other
            # inputs, at another batch size, and refuses a graph that differs
            with torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore", category=torch.jit.TracerWarning)
                warnings.filterwarnings("ignore", message=".*batch_size other than 1.*")
                _write_graph(
                    unrolled(_window_scores_class()(detector, dtype)).eval(), windows, tmp, dtype
                )
                missing = _missing_kernel(tmp) if dtype == torch.float64 else None
                if missing is not None:  # e.g. Conv: onnxruntime has it in float32 only
                    dtype = torch.float32
                    _write_graph(
                        _window_scores_class()(detector, dtype).eval(), windows, tmp, dtype
                    )
                    report["why_float32"] = f"onnxruntime has no float64 kernel for {missing}"
            graph = onnx.load(str(tmp))
            entry = graph.metadata_props.add()
            entry.key, entry.value = METADATA_KEY, json.dumps(scoring_metadata(detector))
            onnx.save(graph, str(tmp))
        except MADClusterError:
            raise
        # the exporter fails in many ways; name the model and why
        except Exception as exc:  # noqa: BLE001
            name = embedder_name(detector.net.embedder)
            raise ExportError(f"{name} does not export to ONNX: {_reason(exc)}") from None
        report["dtype"] = str(dtype).removeprefix("torch.")
        if check:
            report.update(check_export(detector, tmp, dtype))
    return report


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


def _write_graph(module: Any, windows: Any, path: Any, dtype: Any) -> None:
    import torch

    with _default_dtype(dtype):
        torch.onnx.export(
            module,
            (windows,),
            str(path),
            input_names=["windows"],
            output_names=["scores"],
            dynamic_axes={"windows": {0: "batch"}, "scores": {0: "batch"}},
            opset_version=OPSET,
            dynamo=False,
        )


def _missing_kernel(path: Any) -> str | None:
    """The node onnxruntime cannot run (no kernel for its dtype), or None (or no onnxruntime)."""
    try:
        import onnxruntime
    except ImportError:
        return None
    try:
        onnxruntime.InferenceSession(os.fspath(path), providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime's errors are of its own types
        text = str(exc)
        if "Could not find an implementation for" not in text:
            raise
        return text.split("Could not find an implementation for", 1)[1].split(" node", 1)[0].strip()
    return None


def check_export(
    detector: FittedModel, path: str | os.PathLike, graph_dtype: Any = None
) -> dict[str, Any]:
    """Compare the graph at ``path`` (computing in ``graph_dtype``, default the model's scoring
    dtype) with the model's torch scoring on 64 probe windows (every step); ``ExportError`` when a
    step differs by more than :data:`TOLERANCE`, else the numbers. A float32 graph of a float64
    model may also be :data:`FLOAT32_FACTOR` times as far as torch's own float32 network is."""
    import torch

    from madcluster.embedders import embedder_name

    windows = model_windows(detector, _probe_series(detector, 64 * detector.grid.window_size))[0][
        :64
    ]
    got, expected = run_both(detector, path, windows)
    from madcluster.estimator.fitted import scoring_dtype

    model_dtype = str(scoring_dtype(detector)).removeprefix("torch.")
    dtype = model_dtype if graph_dtype is None else str(graph_dtype).removeprefix("torch.")
    atol, rtol = TOLERANCE[dtype]
    diff = np.abs(got - expected)
    allowed = atol + rtol * np.abs(expected)
    tolerance = f"{atol:.0e} + {rtol:.0e} |score|"
    if dtype != model_dtype:
        with torch.no_grad():
            own = (
                _window_scores_class()(detector, torch.float32)
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
    return numbers


def run_both(
    model: FittedModel, path: str | os.PathLike, windows: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per-step scores of ``windows`` from onnxruntime (the graph at ``path``) and from torch
    (the fitted ``model``)."""
    import onnxruntime
    import torch

    detector = model
    session = onnxruntime.InferenceSession(os.fspath(path), providers=["CPUExecutionProvider"])
    got = session.run(["scores"], {"windows": windows})[0].astype(np.float64)
    with torch.no_grad():
        expected = (
            _window_scores_class()(detector).eval()(torch.from_numpy(windows)).double().numpy()
        )
    return got, expected


@contextlib.contextmanager
def _default_dtype(dtype: Any) -> Iterator[None]:
    """torch's default dtype set to ``dtype`` for a while: the TorchScript exporter casts 0-d
    tensors (the radius, the statistics) to the default dtype, float32, inside a float64 graph."""
    import torch

    before = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(before)


def _probe_series(detector: FittedModel, n_rows: int | None = None) -> np.ndarray:
    """Rows around the training data's scale (a seeded draw), enough for the probe windows."""
    rng = np.random.default_rng(0)
    n = max(n_rows or 0, 2 * detector.grid.window_size)
    d, inputs = detector.inputs.n_features, detector.inputs
    return (inputs.scaler_mean[:d] + inputs.scaler_scale[:d] * rng.standard_normal((n, d))).astype(
        np.float32
    )


def _reason(exc: Exception) -> str:
    """The exporter's error in one line, with the cause spelled out where we know it."""
    text = str(exc)
    if "Generator" in text:
        return (
            "its score draws Monte Carlo noise from a seeded torch.Generator, which an ONNX graph "
            "cannot hold"
        )
    return f"{type(exc).__name__}: {text.splitlines()[0][:300] if text else ''}"


__all__ = [
    "ExportError",
    # built on first use by the module __getattr__ (no torch at import)
    "WindowScores",  # noqa: F822
    "check_export",
    "export_onnx",
    "run_both",
    "scoring_metadata",
]
