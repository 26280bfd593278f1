"""What a MADCluster fit produced, as one frozen value: :class:`FittedModel`.

The trained network and its float64 scoring copy, the scoring grid (:class:`ScoringGrid`), what
the model reads (:class:`~madcluster.estimator.inputs.InputSpec`), how the head's terms make the
own score (:class:`HeadScore`), how the parts combine
(:class:`~madcluster.score.combination.Combination`), the warm-up calibration
(:class:`~madcluster.estimator.warmup.Warmup`), the attribution baseline and the threshold. It is
put together in one place, :func:`assemble`, for a fit
(:func:`~madcluster.estimator.fitting.fit_model`) and for a model file's reader, and never
changed; the estimator holds it and reads from it, with what the training recorded beside it
(:class:`TrainingRecord`). Streaming, export, serving and model files take a ``FittedModel``.

One score path: :meth:`FittedModel.own_scores` (model input to warm-up calibrated own scores, a
whole series or a stream's trailing buffer), then the combination adds the parts
(:meth:`FittedModel.decision_function`). Threads are the caller's.

Scores are computed in float64 (``scoring_net``): the network is trained in float32, and its
scoring copy is cast to float64 once. The standardised terms of a trained model have tiny
training spreads (1e-4), which turn float32's rounding of the features h (1e-7) into 1e-3 of a
score, so float32 scores depend on the kernels that computed them (a batch or a stream, torch or
onnxruntime, one CPU or another); in float64 they agree to ~1e-12. A model trained in bfloat16
scores as it trained.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import torch

from madcluster.defaults import AUTO, DEFAULT_BATCH_SIZE
from madcluster.estimator.attribution import AttributionBaseline
from madcluster.estimator.deprecated import DeprecatedAlias
from madcluster.estimator.inputs import InputSpec
from madcluster.estimator.warmup import Warmup
from madcluster.incidents.calibration import IncidentCalibration
from madcluster.score.combination import Combination
from madcluster.score.scoring import (
    CPU_SCORING_BATCH,
    causal_point_outputs,
    combine,
    combine_scores,
    default_score_stride,
    point_outputs,
)
from madcluster.training.network import MADClusterNet


@dataclass(frozen=True)
class ScoringGrid:
    """Where the scoring windows lie: window L, score stride (resolved at fit: L // 10 for causal
    embedders, L else), whether step t's score reads steps <= t only (``causal``: a causal
    embedder with per-step scores), and the windows scored at a time."""

    window_size: int
    score_stride: int
    causal: bool
    scoring_batch: int

    @classmethod
    def for_network(cls, net: MADClusterNet, params: Mapping[str, Any]) -> ScoringGrid:
        """The grid of ``net`` trained with the estimator's ``params``, resolved once, here."""
        causal = bool(net.embedder.causal)
        stride = params["score_stride"]
        window = int(params["window_size"])
        return cls(
            window,
            int(stride) if stride is not None else default_score_stride(window, causal),
            causal and params["score_type"] == "point",
            # four training batches of 128 on an accelerator whatever the training batch (a small
            # one, the D-RNN's 32, is for the CPU's step cost), or four of the batch a user chose
            4 * (DEFAULT_BATCH_SIZE if params["batch_size"] == AUTO else int(params["batch_size"])),
        )

    def batch_on(self, device: torch.device) -> int:
        """Windows scored at a time on ``device``: ``scoring_batch``, at most
        :data:`~madcluster.score.scoring.CPU_SCORING_BATCH` on a CPU (float64 is faster in small
        batches)."""
        return (
            self.scoring_batch
            if device.type != "cpu"
            else min(self.scoring_batch, CPU_SCORING_BATCH)
        )


@dataclass(frozen=True)
class HeadScore:
    """How the head's named terms (and the base model's own score, ``base``) make the own
    score: each standardised with its training statistics ``stats`` when ``scaling`` is
    ``standardized``, summed as ``base_combination`` says
    (:func:`~madcluster.score.scoring.combine`)."""

    stats: dict[str, tuple[float, float]]
    scaling: str
    base_combination: str

    def combine(self, terms: Mapping[str, np.ndarray]) -> np.ndarray:
        """The own score from the head's named terms, numpy arrays (checked finite)."""
        return combine_scores(terms, self.stats, self.scaling, self.base_combination)

    def combine_tensors(self, terms: Mapping[str, Any]) -> Any:
        """The same combination on torch tensors (what the ONNX graph holds)."""
        return combine(terms, self.stats, self.scaling, self.base_combination)


def scoring_copy(net: MADClusterNet) -> MADClusterNet:
    """The network every score comes from: a float64 copy of ``net`` in eval mode, or ``net``
    itself for a model trained in bfloat16 (the module docstring says why)."""
    if net.precision is not None:
        return net.eval()
    return copy.deepcopy(net).double().eval()


@dataclass(frozen=True, eq=False)
class FittedModel:
    """A fitted MADCluster's scoring state; see the module docstring."""

    net: MADClusterNet
    scoring_net: MADClusterNet  # scoring_copy(net)
    grid: ScoringGrid
    inputs: InputSpec
    head: HeadScore
    combination: Combination
    warmup: Warmup
    attribution: AttributionBaseline
    threshold: float
    # the false-alarm budget measured at fit time (None: no held-out rows, or an older file)
    incident_calibration: IncidentCalibration | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickles and deep copies leave the float64 copy out (rebuilt from ``net`` on loading)."""
        kept = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "scoring_net"}
        return (_rebuilt, (kept,))

    def decision_function(self, X: Any) -> np.ndarray:
        """Anomaly score per row of ``X`` (T,), higher = more anomalous; one per time step."""
        rows = self.inputs.check_rows(X)
        return self.combination.score(rows, self.own_scores(self.inputs.model_input(rows)))

    def own_scores(
        self,
        scaled: np.ndarray,
        first_step: int = 0,
        score_from: int | None = None,
        net: MADClusterNet | None = None,
    ) -> np.ndarray:
        """The own scores (warm-up calibrated) of steps ``score_from..`` (default: all) of model
        input ``scaled`` whose first row is step ``first_step`` of the series: the one scoring path
        of a whole series (``first_step = 0``) and of a stream's trailing buffer (reaching back to
        the window of the first step it scores). ``net``: another copy of the network (the float32
        one); default ``scoring_net``."""
        score_from = first_step if score_from is None else score_from
        net = self.scoring_net if net is None else net
        terms = step_outputs(self, scaled, net.score, first_step, score_from, net)
        steps = np.arange(score_from, first_step + len(scaled))
        return self.warmup.calibrate(self.head.combine(terms), self.warmup.positions(steps))

    # the old spelling of step_outputs(model, ...), one release (CHANGELOG: Deprecated)
    outputs = DeprecatedAlias(
        lambda self, *a, **k: step_outputs(self, *a, **k),
        "madcluster.estimator.fitted.step_outputs(model, ...)",
    )


def assemble(
    net: MADClusterNet,
    params: Mapping[str, Any],
    inputs: InputSpec,
    head_stats: dict[str, tuple[float, float]],
    combination: Combination,
    warmup_quantiles: np.ndarray | None,
    attribution: AttributionBaseline,
    threshold: float,
) -> FittedModel:
    """The fitted model of trained ``net`` and the estimator's ``params``: what follows from them
    (the scoring copy, the grid, the head's and the warm-up's settings) derived here,
    once, for a fit and for a model file; the fitted values as given."""
    grid = ScoringGrid.for_network(net, params)
    return FittedModel(
        net=net,
        scoring_net=scoring_copy(net),
        grid=grid,
        inputs=inputs,
        head=HeadScore(head_stats, params["score_scaling"], params["base_score_combination"]),
        combination=combination,
        warmup=Warmup(grid.window_size, grid.score_stride, grid.causal, warmup_quantiles),
        attribution=attribution,
        threshold=threshold,
    )


@dataclass(frozen=True)
class TrainingRecord:
    """What the training recorded beside the model, kept by the estimator (``decision_scores_``,
    ``history_``, ``center_path_``, ``device_``) and by its model file: the training scores the
    threshold was taken from, the per-epoch history, the center's path (row 0 its initial value;
    None for base-only) and the device it trained on."""

    decision_scores: np.ndarray
    history: dict[str, Any]
    center_path: np.ndarray | None
    device: str


def scoring_dtype(model: FittedModel) -> torch.dtype:
    """The dtype of ``model.scoring_net``'s input (float64, or float32 for bfloat16 models)."""
    return torch.float32 if model.net.precision is not None else torch.float64


def _rebuilt(kept: dict[str, Any]) -> FittedModel:
    """A pickled :class:`FittedModel` with its float64 copy made again (pickles from before the
    embedder's name was read from the network hold a ``name``)."""
    kept = {k: v for k, v in kept.items() if k != "name"}
    return FittedModel(scoring_net=scoring_copy(kept["net"]), **kept)


def step_outputs(
    model: FittedModel,
    scaled: np.ndarray,
    read: Callable[[torch.Tensor, int], Mapping[str, torch.Tensor]],
    first_step: int = 0,
    score_from: int = 0,
    net: MADClusterNet | None = None,
) -> dict[str, np.ndarray]:
    """``read``'s per-step outputs of ``model``'s input ``scaled``, each step from the window that
    scores it (``net``: the network ``read`` runs, whose device and dtype the input takes; default
    ``scoring_net``; ``read(windows, first_position)``: the outputs of positions
    ``first_position..``). What :meth:`FittedModel.own_scores`, :func:`score_terms` and
    :func:`embed` read through."""
    net = model.scoring_net if net is None else net
    weight = next(net.parameters())
    dtype = scoring_dtype(model) if net is model.scoring_net else weight.dtype
    series = torch.from_numpy(scaled).to(weight.device, dtype)
    grid = model.grid
    batch = grid.batch_on(weight.device)
    if grid.causal:
        return causal_point_outputs(
            read, series, grid.window_size, grid.score_stride, batch, first_step, score_from
        )
    return point_outputs(
        read, series, grid.window_size, grid.score_stride, batch, net.embedder.causal
    )


def score_terms(model: FittedModel, X: Any) -> dict[str, np.ndarray]:
    """The named per-step terms (T,) the own score combines: the head's, and ``base`` when the
    embedder has its own score."""
    return step_outputs(model, model.inputs.checked_input(X), model.scoring_net.score)


def embed(model: FittedModel, X: Any) -> np.ndarray:
    """The features h, one vector per row of ``X`` ``(T, f)``, from the windows that score them."""
    net = model.scoring_net

    def features(windows: torch.Tensor, first_position: int) -> dict[str, torch.Tensor]:
        return {"h": net(windows).h[:, first_position:]}

    return step_outputs(model, model.inputs.checked_input(X), features)["h"]


__all__ = [
    "FittedModel",
    "HeadScore",
    "ScoringGrid",
    "TrainingRecord",
    "assemble",
    "embed",
    "score_terms",
    "scoring_copy",
    "scoring_dtype",
    "step_outputs",
]
