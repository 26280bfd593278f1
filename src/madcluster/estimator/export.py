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

The export check (:mod:`madcluster.estimator.export_check`) scores 64 probe windows with
onnxruntime and with the model's own torch scoring network (what ``decision_function`` uses) and
refuses the graph when any step score differs by more than ``ATOL + RTOL |score|`` (``TOLERANCE``,
by the graph's dtype; a model trained in bfloat16 scores and exports in float32); then it scores a
probe series of several windows' rows whole with :class:`OnnxScorer` on the file and with
``decision_function``, and refuses the file when a row differs by more than the largest step
allowance plus ``ATOL + RTOL |row score|``: the mapping between rows and windows, the warm-up and
the input terms are checked too, not only the graph. onnxruntime has no float64 ``Conv`` either: a
model with convolutions (BeatGAN, the attention models' token embeddings) exports as a float32
graph, checked against the float64 scores within the float32 tolerance or a few times torch's own
float32 error, as before scores were float64.

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

from madcluster.atomic import atomic_path
from madcluster.estimator.export_check import (
    ExportError,
    check_export,
    model_windows,
    probe_series,
    window_scores_class,
)
from madcluster.estimator.onnx_metadata import scoring_metadata
from madcluster.estimator.onnx_scorer import METADATA_KEY
from madcluster.exceptions import MADClusterError

if TYPE_CHECKING:
    from madcluster.estimator.fitted import FittedModel

OPSET = 17


def export_onnx(model: FittedModel, path: str | os.PathLike, check: bool = True) -> dict[str, Any]:
    """Write fitted ``model`` (a MADCluster's ``model_``) as an ONNX graph to
    ``path``, with what :class:`OnnxScorer` needs in its metadata; with ``check``, compare probe
    windows (onnxruntime vs torch) and probe rows (the file's OnnxScorer vs ``decision_function``)
    and raise ``ExportError`` when they differ by more than the check's tolerance
    (:func:`~madcluster.estimator.export_check.check_export`). The file appears only once written
    and checked: a failed export leaves nothing at ``path``."""
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
    windows = torch.from_numpy(model_windows(detector, probe_series(detector))[0][:8])
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
        "rows_max_abs_diff": None,
        "rows_tolerance": None,
        "rows_compared": None,
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
                    unrolled(window_scores_class()(detector, dtype)).eval(), windows, tmp, dtype
                )
                missing = _missing_kernel(tmp) if dtype == torch.float64 else None
                if missing is not None:  # e.g. Conv: onnxruntime has it in float32 only
                    dtype = torch.float32
                    _write_graph(window_scores_class()(detector, dtype).eval(), windows, tmp, dtype)
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


def _reason(exc: Exception) -> str:
    """The exporter's error in one line, with the cause spelled out where we know it."""
    text = str(exc)
    if "Generator" in text:
        return (
            "its score draws Monte Carlo noise from a seeded torch.Generator, which an ONNX graph "
            "cannot hold"
        )
    return f"{type(exc).__name__}: {text.splitlines()[0][:300] if text else ''}"


__all__ = ["OPSET", "export_onnx", "scoring_metadata"]
