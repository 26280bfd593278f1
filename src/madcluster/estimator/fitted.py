"""What a MADCluster fit produced, as one value: :class:`FittedModel`.

The network, the resolved window and score stride, whether the score is causal, the input
scaling and the constant training columns, the score's parts and how they combine
(:class:`ScoreParts`), the warm-up table, the attribution baseline and the threshold. It scores on
its own: every path from rows to per-step scores (a whole series, the stream's trailing buffer,
ONNX's windows, the features h) is a method here, so streaming, export, serving and model files
take a ``FittedModel`` and never reach into the estimator. The estimator keeps its parameters,
``fit`` (which builds this) and the scikit-learn / PyOD surface, and delegates.

Threads are the caller's: the estimator and the stream scorer set them around these calls.

Scores are computed in float64 (:attr:`FittedModel.scoring_net`): the network is trained in
float32, and its scoring copy is cast to float64 once. The standardised terms of a trained model
have tiny training spreads (1e-4), which turn float32's rounding of the features h (1e-7) into
1e-3 of a score, so float32 scores depend on the kernels that computed them (a batch or a stream,
torch or onnxruntime, one CPU or another); in float64 they agree to ~1e-12. A model trained in
bfloat16 scores as it trained.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

import numpy as np
import torch

from madcluster.data.constant_columns import bound_constant_columns
from madcluster.data.scaling import model_input
from madcluster.data.validation import align_columns, check_series
from madcluster.data.windows import causal_window_of, gather_windows, pad_for_windows, window_starts
from madcluster.embedders.drnn_steps import DilatedRNNSteps
from madcluster.estimator.attribution import (
    BASELINE_STEPS,
    channel_groups,
    fit_baseline,
    input_deviation,
    occlusion_contributions,
    spans_around,
    standardised_contributions,
)
from madcluster.estimator.warmup import WARMUP_WINDOWS, calibrate, fit_quantile_table, sample_starts
from madcluster.exceptions import ParameterError
from madcluster.score.combination import Combination
from madcluster.score.parts import FitContext, Part
from madcluster.score.scoring import (
    CPU_SCORING_BATCH,
    MIN_SCORING_BATCH,
    causal_point_outputs,
    combine,
    combine_scores,
    default_score_stride,
    point_outputs,
    score_statistics,
)
from madcluster.score.smoothing import resolve_part_smoothing
from madcluster.training.loop import MADClusterNet


@dataclass(eq=False)
class ScoreParts:
    """The score's parts and how they combine: the head's named terms (and the base model's own
    score, ``base``), each standardised with its training statistics ``stats`` when ``scaling``
    is ``standardized`` and summed as ``base_combination`` says, give the own score; the
    :class:`~madcluster.score.combination.Combination` adds the input terms to it (none: the own
    score as it is)."""

    stats: dict[str, tuple[float, float]]
    scaling: str
    base_combination: str
    combination: Combination = field(default_factory=Combination.own_alone)

    @property
    def input_terms(self) -> list[Part]:
        return self.combination.terms

    @property
    def weights(self) -> dict[str, float]:
        return self.combination.weights

    @property
    def smoothing(self) -> dict[str, int]:
        return self.combination.smoothing

    def combine(self, terms: dict[str, np.ndarray]) -> np.ndarray:
        """The score (before the input terms) from the head's named terms, numpy arrays."""
        return combine_scores(terms, self.stats, self.scaling, self.base_combination)

    def combine_tensors(self, terms: dict[str, Any]) -> Any:
        """The same combination on torch tensors (what the ONNX graph holds)."""
        return combine(terms, self.stats, self.scaling, self.base_combination)

    def with_input_terms(self, scores: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """``scores`` of all of checked ``rows`` plus the input terms (unchanged without terms)."""
        return self.combination.score(rows, scores)


@dataclass(eq=False)
class FittedModel:
    """A fitted MADCluster's scoring state; see the module docstring."""

    net: MADClusterNet
    name: str  # the embedder's name (its class name for a custom module), for messages
    window_size: int
    score_stride: int  # resolved at fit: window_size // 10 for causal embedders, window_size else
    causal: bool  # step t's score reads steps <= t only (causal embedder, per-step scores)
    scoring_batch: int
    scaler_mean: np.ndarray
    scaler_scale: np.ndarray
    roughness_window: int
    n_features: int
    feature_names: np.ndarray | None
    constant_columns: np.ndarray
    parts: ScoreParts
    warmup_quantiles: np.ndarray | None = None
    attribution_baseline: np.ndarray | None = None
    threshold: float = float("nan")
    # the training rows the attribution baseline is measured on, until it is (first explain or save)
    attribution_rows: np.ndarray | None = field(default=None, repr=False)
    # (the network it was made from, its float64 copy): rebuilt when ``net`` is replaced
    _scoring: tuple[MADClusterNet, MADClusterNet] | None = field(default=None, init=False, repr=False)

    @property
    def scoring_net(self) -> MADClusterNet:
        """The network every score comes from: a float64 copy of :attr:`net` in eval mode (the
        module docstring says why), or ``net`` itself for a model trained in bfloat16."""
        if self.net.precision is not None:
            return self.net.eval()
        if self._scoring is None or self._scoring[0] is not self.net:
            self._scoring = (self.net, copy.deepcopy(self.net).double().eval())
        return self._scoring[1]

    def __getstate__(self) -> dict[str, Any]:
        """Pickles and deep copies leave the float64 copy out (rebuilt on first use)."""
        return {**self.__dict__, "_scoring": None}

    @property
    def scoring_dtype(self) -> torch.dtype:
        """The dtype of :attr:`scoring_net`'s input (float64, or float32 for bfloat16 models)."""
        return torch.float32 if self.net.precision is not None else torch.float64

    @classmethod
    def for_network(cls, net: MADClusterNet, params: Mapping[str, Any], **fitted: Any) -> FittedModel:
        """The fitted model of ``net`` trained with the estimator's ``params``: window, score
        stride and causality resolved once, here; ``fitted``: the remaining fields."""
        embedder = params["embedder"]
        causal = bool(net.embedder.causal)
        stride = params["score_stride"]
        return cls(
            net=net, name=embedder if isinstance(embedder, str) else type(embedder).__name__,
            window_size=int(params["window_size"]),
            score_stride=int(stride) if stride is not None else default_score_stride(params["window_size"], causal),
            causal=causal and params["score_type"] == "point", scoring_batch=4 * int(params["batch_size"]), **fitted,
        )

    # ------------------------------------------------------------------ rows in
    def check_rows(self, X: Any, min_length: int | None = None, name: str = "X") -> np.ndarray:
        """``X`` as a float32 ``(T, D)`` array in the training column order (a DataFrame's columns
        matched by name), at least ``min_length`` rows (default: one window), or a ``DataError``."""
        return self.bound_constant_columns(self.validate_rows(X, min_length, name))

    def validate_rows(self, X: Any, min_length: int | None = None, name: str = "X") -> np.ndarray:
        """:meth:`check_rows` before the constant training columns are replaced by their steps."""
        length = self.window_size if min_length is None else min_length
        aligned = align_columns(X, self.feature_names, name="X")
        return check_series(aligned, min_length=length, n_features=self.n_features, name=name)

    def bound_constant_columns(self, rows: np.ndarray, previous_row: np.ndarray | None = None,
                               warned: set[int] | None = None) -> np.ndarray:
        """Validated ``rows`` with each column constant in training replaced by its training value
        plus its step from the previous row (``previous_row`` before the first row; None: the
        training value), as :mod:`madcluster.data.constant_columns` explains (``warned``: its
        columns already named)."""
        return bound_constant_columns(rows, self.constant_columns, self.scaler_mean, self.feature_names, previous_row, warned)

    def model_input(self, rows: np.ndarray) -> np.ndarray:
        """Checked ``rows`` as the network's input (scaled, roughness channels added)."""
        return model_input(rows, self.scaler_mean, self.scaler_scale, self.roughness_window)

    def checked_input(self, X: Any) -> np.ndarray:
        """``X`` checked against the training columns, as the network's input."""
        return self.model_input(self.check_rows(X))

    # ------------------------------------------------------------------ scores out
    @property
    def streams(self) -> bool:
        """Whether rows can be scored as they come: a causal own score (input terms stream too,
        :mod:`madcluster.score.combination`)."""
        return self.causal

    def decision_function(self, X: Any) -> np.ndarray:
        """Anomaly score per row of ``X`` (T,), higher = more anomalous; exactly one per time step."""
        rows = self.check_rows(X)
        return self.parts.with_input_terms(self.score_with_history(rows), rows)

    def score_with_history(self, rows: np.ndarray, first_step: int = 0, score_from: int | None = None) -> np.ndarray:
        """Scores of steps ``score_from..`` (default: all) of checked ``rows`` whose first row is
        step ``first_step`` of the series: the one scoring path of :meth:`decision_function`
        (``first_step = 0``) and of :class:`~madcluster.estimator.streaming.StreamScorer` (a
        trailing buffer that reaches back to :meth:`history_start` of the first step it scores)."""
        score_from = first_step if score_from is None else score_from
        terms = self.point_outputs(self.model_input(rows), self.scoring_net.score, first_step, score_from)
        return self.calibrate_warmup(self.parts.combine(terms), self.warmup_positions(np.arange(score_from, first_step + len(rows))))

    def score_model_input(self, scaled: np.ndarray, net: MADClusterNet | None = None) -> np.ndarray:
        """:meth:`decision_function`'s path from model input (a series starting at step 0) to
        scores, before the input terms (``net``: another copy of the network, e.g. the float32 one)."""
        net = self.scoring_net if net is None else net
        terms = self.point_outputs(scaled, net.score, net=net)
        return self.calibrate_warmup(self.parts.combine(terms), self.warmup_positions(np.arange(len(scaled))))

    def score_terms(self, X: Any) -> dict[str, np.ndarray]:
        """The named per-step terms (T,) the score combines: the head's, and ``base`` when the
        embedder has its own score."""
        return self.point_outputs(self.checked_input(X), self.scoring_net.score)

    def embed(self, X: Any) -> np.ndarray:
        """The features h, one vector per row of ``X`` ``(T, f)``, from the windows that score them."""
        net = self.scoring_net
        return self.point_outputs(self.checked_input(X), lambda x: {"h": net(x).h})["h"]

    def point_outputs(self, scaled: np.ndarray, read: Callable[[torch.Tensor], dict[str, torch.Tensor]],
                      first_step: int = 0, score_from: int = 0, net: MADClusterNet | None = None) -> dict[str, np.ndarray]:
        """``read``'s per-step outputs of model input ``scaled``, each step from the window that
        scores it (``net``: the network ``read`` runs, whose device and dtype the input takes;
        default :attr:`scoring_net`)."""
        net = self.scoring_net if net is None else net
        weight = next(net.parameters())
        dtype = self.scoring_dtype if net is self.scoring_net else weight.dtype
        series = torch.from_numpy(scaled).to(weight.device, dtype)
        batch = self.batch_on(weight.device)
        if self.causal:
            return causal_point_outputs(read, series, self.window_size, self.score_stride, batch, first_step, score_from)
        return point_outputs(read, series, self.window_size, self.score_stride, batch, net.embedder.causal)

    def batch_on(self, device: torch.device) -> int:
        """Windows scored at a time on ``device``: :attr:`scoring_batch`, at most
        :data:`~madcluster.score.scoring.CPU_SCORING_BATCH` on a CPU (float64 is faster in small batches)."""
        return self.scoring_batch if device.type != "cpu" else min(self.scoring_batch, CPU_SCORING_BATCH)

    # ------------------------------------------------------------------ streaming and ONNX
    def row_stepper(self) -> DilatedRNNSteps | None:
        """The stream's one-row-at-a-time path through the embedder (:mod:`madcluster.embedders.drnn_steps`),
        or None where the embedder has none (then every chunk reruns its windows)."""
        if not self.causal or not DilatedRNNSteps.supports(self.net.embedder, self.net.precision):
            return None
        return DilatedRNNSteps(self.scoring_net.embedder, self.window_size, self.score_stride, MIN_SCORING_BATCH)

    def score_features(self, h: torch.Tensor, steps: np.ndarray) -> np.ndarray:
        """Scores of stream ``steps`` from their features ``h [m, f]`` (each from the window that
        scores its step): the head's terms, combined and warm-up calibrated as in :meth:`score_with_history`."""
        n = len(h)
        if n < MIN_SCORING_BATCH:  # padded as causal_point_outputs pads its batches
            h = torch.cat([h, h[-1:].expand(MIN_SCORING_BATCH - n, -1)])
        with torch.inference_mode():
            terms = self.scoring_net.head.score_terms(h[:, None, :])
        values = {name: v[:n, 0].double().cpu().numpy() for name, v in terms.items()}
        return self.calibrate_warmup(self.parts.combine(values), self.warmup_positions(steps))

    def history_start(self, step: int) -> int:
        """The earliest step that scoring ``step`` (and any later one) reads, for a causal model:
        its window's start, less the roughness channels' reach."""
        return max(0, int(causal_window_of(np.asarray([step]), self.window_size, self.score_stride)[0]) - self.roughness_window)

    def model_windows(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """The windows ``[N, L, width]`` (float32 model input) that :meth:`decision_function`
        scores for ``X`` and their start rows: the input of the ONNX graph (:mod:`madcluster.estimator.export`)."""
        series = torch.from_numpy(self.checked_input(X))
        if self.causal:
            starts = np.unique(causal_window_of(np.arange(len(series)), self.window_size, self.score_stride))
        else:
            starts = window_starts(len(series), self.window_size, self.score_stride)
        return gather_windows(pad_for_windows(series, starts, self.window_size), starts, self.window_size).numpy(), starts

    # ------------------------------------------------------------------ attribution
    def explain(self, X: Any, rows: Any = None) -> np.ndarray:
        """Per-channel contributions to the score, ``(T, D)`` (:meth:`MADCluster.explain
        <madcluster.estimator.detector.MADCluster.explain>`); ``rows``: a boolean mask of the
        steps to explain (the others are 0), scoring only the spans around them."""
        inputs = self.checked_input(X)
        groups = channel_groups(self.n_features, inputs.shape[1])
        baseline = self.explain_baseline

        def explain_span(span: np.ndarray) -> np.ndarray:
            occlusion = occlusion_contributions(self.score_model_input, span, groups)
            return occlusion if baseline is None else standardised_contributions(occlusion, input_deviation(span, groups), baseline)

        if rows is None:
            return explain_span(inputs)
        mask = np.asarray(rows, dtype=bool)
        if mask.shape != (len(inputs),):
            raise ParameterError(f"rows must be a boolean mask of the {len(inputs)} rows, got shape {mask.shape}")
        out = np.zeros((len(inputs), len(groups)))
        for start, end in spans_around(mask, self.window_size, len(inputs)):
            out[start:end] = explain_span(inputs[start:end])
        out[~mask] = 0.0
        return out

    # ------------------------------------------------------------------ warm-up
    def warmup_reference_from(self) -> int:
        """First window position that steps after the first window use: L - s (0 if not causal)."""
        return self.window_size - self.score_stride if self.causal else 0

    def warmup_positions(self, steps: np.ndarray) -> np.ndarray:
        """Each step's position in the window that scores it (its history, for causal models)."""
        if not self.causal:
            return np.full(len(steps), self.window_size - 1)
        return steps - causal_window_of(steps, self.window_size, self.score_stride)

    def calibrate_warmup(self, scores: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """Warm-up calibrated scores (unchanged for non-causal models)."""
        table = self.warmup_quantiles
        return scores if table is None else calibrate(scores, positions, table, self.warmup_reference_from())

    # ------------------------------------------------------------------ after training
    def fit_scores(self, data: np.ndarray, scaled: np.ndarray, input_terms: tuple[str, ...], random_state: int | None,
                   weights: dict[str, float] | None = None, smoothing: dict[str, int] | None = None) -> np.ndarray:
        """Fit what comes after the network, in order: the terms' statistics (steady rows only),
        the warm-up table, the input terms (weighted by ``weights``, the parts' full table, and
        smoothed by ``smoothing``, None: the defaults); returns the training scores behind the threshold."""
        terms = self.point_outputs(scaled, self.scoring_net.score)
        positions = self.warmup_positions(np.arange(len(scaled)))
        steady = positions >= self.warmup_reference_from()  # warm-up rows are calibrated, not counted
        self.parts.stats = score_statistics({n: v[steady] for n, v in terms.items()}, self.parts.scaling)
        self.warmup_quantiles = self._fit_warmup(data) if self.causal else None
        scores = self.calibrate_warmup(self.parts.combine(terms), positions)
        widths = resolve_part_smoothing(smoothing, self.window_size)
        context = FitContext(self.window_size, random_state)
        self.parts.combination = Combination.fit(input_terms, data, scores, context, weights, widths)
        scores = self.parts.with_input_terms(scores, data)
        return scores

    def defer_attribution_baseline(self, scaled: np.ndarray) -> None:
        """Keep the training rows :meth:`fit_attribution_baseline` reads (its last
        :data:`~madcluster.estimator.attribution.BASELINE_STEPS`) and measure it when it is first
        needed (:attr:`explain_baseline`: the first ``explain``, or a save), not in ``fit``: its
        ``D + 1`` scoring passes were 1.1 s of the 20,000 x 6 fit, more with more channels. The
        same rows and the same float32 network give the same baseline."""
        self.attribution_baseline, self.attribution_rows = None, np.array(scaled[-BASELINE_STEPS:])

    @property
    def explain_baseline(self) -> np.ndarray | None:
        """The attribution baseline, measured now if the fit deferred it."""
        if self.attribution_baseline is None and self.attribution_rows is not None:
            self.fit_attribution_baseline(self.attribution_rows)
        return self.attribution_baseline

    @explain_baseline.setter
    def explain_baseline(self, value: np.ndarray | None) -> None:
        self.attribution_baseline, self.attribution_rows = value, None

    def fit_attribution_baseline(self, scaled: np.ndarray) -> None:
        """What :meth:`explain`'s terms are on the training series (:func:`madcluster.estimator.attribution.fit_baseline`).

        Scored with the float32 network the fit trained, not the float64 copy: the baseline is a
        mean and spread over thousands of steps, which float32's 1e-7 does not move, and its
        ``D + 1`` scoring passes were a tenth of the 20,000 x 6 fit's time in float64."""
        net = self.net.eval()
        self.attribution_baseline = fit_baseline(lambda x: self.score_model_input(x, net), scaled,
                                                 channel_groups(self.n_features, scaled.shape[1]))
        self.attribution_rows = None

    def _fit_warmup(self, data: np.ndarray) -> np.ndarray:
        """Quantiles of the score per window position (:mod:`madcluster.estimator.warmup`), on training
        windows each scored as the start of a fresh series (model input built from the window alone)."""
        starts = sample_starts(len(data), self.window_size, WARMUP_WINDOWS)
        fresh = np.stack([self.model_input(data[s : s + self.window_size]) for s in starts])
        net = self.scoring_net
        windows = torch.from_numpy(fresh).to(next(net.parameters()).device, self.scoring_dtype)
        step = self.batch_on(windows.device)
        with torch.no_grad():
            chunks = [net.score(windows[i : i + step]) for i in range(0, len(windows), step)]
        terms = {name: torch.cat([c[name] for c in chunks]).double().cpu().numpy() for name in chunks[0]}
        return fit_quantile_table(self.parts.combine(terms), self.warmup_reference_from())


class FromModel:
    """A fitted attribute that lives in the fitted model (``model_``), readable (and, for
    experiments, writable) on the estimator as scikit-learn style ``name_`` attributes."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __get__(self, obj: Any, owner: type) -> Any:
        return self if obj is None else attrgetter(self.path)(obj.model_)

    def __set__(self, obj: Any, value: Any) -> None:
        owner, _, name = self.path.rpartition(".")
        setattr(attrgetter(owner)(obj.model_) if owner else obj.model_, name, value)


def fitted_model(model: Any) -> FittedModel:
    """``model`` itself, or the :class:`FittedModel` of a fitted MADCluster (``model_``): what
    streaming, export and serving accept."""
    return model if isinstance(model, FittedModel) else model.model_
