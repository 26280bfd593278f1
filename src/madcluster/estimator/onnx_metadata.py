"""What an exported ONNX file's metadata holds (under
:data:`~madcluster.estimator.onnx_scorer.METADATA_KEY`, as JSON): everything that turns rows into
the graph's windows and its window step scores into one score per row (scaling, constant
columns, window grid, warm-up, threshold, the score's other parts), so
:class:`~madcluster.estimator.onnx_scorer.OnnxScorer` needs only the file.

Why a module of its own: the export (:mod:`madcluster.estimator.export`) writes the graph and
checks it; this is what it writes beside the graph, read back by the scorer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from madcluster.estimator.onnx_scorer import METADATA_VERSION

if TYPE_CHECKING:
    from madcluster.estimator.fitted import FittedModel


def scoring_metadata(detector: FittedModel) -> dict[str, Any]:
    """What turns rows into the graph's windows and its step scores into one score per row."""
    table, grid = detector.warmup.quantiles, detector.grid
    inputs = {  # the inputs' record, as a model file writes it (its arrays as lists here)
        k: v.tolist() if isinstance(v, np.ndarray) else v
        for k, v in detector.inputs.to_record().items()
    }
    return {
        "version": METADATA_VERSION,
        **inputs,
        "window_size": int(grid.window_size),
        "score_stride": int(grid.score_stride),
        "causal": bool(grid.causal),
        # off the causal grid, a causal embedder's steps come from their most-history window
        "embedder_causal": bool(detector.net.embedder.causal),
        "warmup_quantiles": None if table is None else np.asarray(table, dtype=np.float64).tolist(),
        "warmup_reference_from": int(detector.warmup.reference_from),
        "threshold": float(detector.threshold),
        **input_terms_metadata(detector),
    }


def input_terms_metadata(detector: FittedModel) -> dict[str, Any]:
    """The score's combination as a model file writes it (its record and its parts' arrays, here
    as JSON lists): :class:`OnnxScorer` adds the parts to the graph's score with numpy, as
    ``decision_function`` does (none: the key is absent and the score is the graph's alone)."""
    from madcluster.score.schema import combination_arrays, combination_record

    combination = detector.combination
    if not combination.combines:
        return {}
    arrays = {
        k: {"dtype": str(v.dtype), "shape": list(v.shape), "values": np.asarray(v).ravel().tolist()}
        for k, v in combination_arrays(combination).items()
    }
    return {"combination": {**combination_record(combination), "arrays": arrays}}
