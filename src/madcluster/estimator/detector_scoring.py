"""How a fitted MADCluster scores: every path from rows to per-step scores (whole series, the
stream's trailing buffer, ONNX's windows, the features h), the warm-up calibration of a causal
model's first steps, and the score's combination from its terms.

A mixin of :class:`~madcluster.estimator.detector.MADCluster` (which holds fitting and the parameters), so
the estimator's module stays small; the arithmetic itself is in :mod:`madcluster.score.scoring`,
:mod:`madcluster.estimator.warmup` and :mod:`madcluster.data.scaling`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from madcluster.data.constant_columns import bound_constant_columns
from madcluster.data.scaling import model_input
from madcluster.data.validation import check_series
from madcluster.data.windows import causal_window_of, gather_windows, pad_for_windows, window_starts
from madcluster.embedders.drnn_steps import DilatedRNNSteps
from madcluster.estimator.attribution import (
    channel_groups,
    fit_baseline,
    input_deviation,
    occlusion_contributions,
    spans_around,
    standardised_contributions,
)
from madcluster.estimator.warmup import WARMUP_WINDOWS, calibrate, fit_quantile_table, sample_starts
from madcluster.exceptions import ParameterError, StreamError
from madcluster.score.input_terms import (
    add_input_terms,
    check_input_terms,
    fit_input_terms,
    input_term_stats,
)
from madcluster.score.scoring import (
    MIN_SCORING_BATCH,
    causal_point_outputs,
    combine,
    combine_scores,
    default_score_stride,
    point_outputs,
    score_statistics,
)
from madcluster.threads import torch_threads

if TYPE_CHECKING:
    from madcluster.estimator.streaming import StreamScorer


class DetectorScoring:
    """The scoring methods of a fitted MADCluster (see the module docstring)."""

    def decision_function(self, X: Any) -> np.ndarray:
        """Anomaly score per row of ``X`` (T,), higher = more anomalous; exactly one per time step."""
        rows = self.check_rows(X)
        return self._with_input_terms(self.score_with_history(rows), rows)

    def check_rows(self, X: Any, min_length: int | None = None, name: str = "X") -> np.ndarray:
        """``X`` as a float32 ``(T, D)`` array in the training column order (a DataFrame's columns
        matched by name), at least ``min_length`` rows (default: one window), or a ``DataError``."""
        return self.bound_constant_columns(self.validate_rows(X, min_length, name))

    def validate_rows(self, X: Any, min_length: int | None = None, name: str = "X") -> np.ndarray:
        """:meth:`check_rows` before the constant training columns are replaced by their steps."""
        self._check_fitted()
        length = self.window_size if min_length is None else min_length
        return check_series(self._align_feature_names(X), min_length=length, n_features=self.n_features_in_, name=name)

    def bound_constant_columns(self, rows: np.ndarray, previous_row: np.ndarray | None = None) -> np.ndarray:
        """Validated ``rows`` with each column constant in training replaced by its training value
        plus its step from the previous row (``previous_row`` before the first row; None: the
        training value), as :mod:`madcluster.data.constant_columns` explains."""
        return bound_constant_columns(rows, self.constant_columns_, self.scaler_mean_, getattr(self, "feature_names_in_", None), previous_row)

    def score_with_history(self, rows: np.ndarray, first_step: int = 0, score_from: int | None = None) -> np.ndarray:
        """Scores of steps ``score_from..`` (default: all) of checked ``rows`` whose first row is
        step ``first_step`` of the series: the one scoring path of :meth:`decision_function`
        (``first_step = 0``) and of :class:`~madcluster.estimator.streaming.StreamScorer` (a trailing buffer
        that reaches back to :meth:`history_start` of the first step it scores)."""
        score_from = first_step if score_from is None else score_from
        terms = self._point_outputs(self._model_input(rows), self.net_.score, first_step, score_from)
        return self._calibrate_warmup(self._combine(terms), self._warmup_positions(np.arange(score_from, first_step + len(rows))))

    def stream(self) -> StreamScorer:
        """A :class:`~madcluster.estimator.streaming.StreamScorer` (rows in chunks of any size, each new row's
        score and flag out); needs a causal model (D-RNN, DeepSVDD, OmniAnomaly, THOC)."""
        from madcluster.estimator.streaming import StreamScorer

        self._check_fitted()
        if self._input_terms():
            raise StreamError(f"streaming needs step t's score to read steps <= t only; input_terms={self.input_terms!r} "
                              "adds terms of whole series (kmeans averages windows that start after t): score whole "
                              "series with decision_function, or fit a causal model to stream: MADCluster.from_preset(\"streaming\") "
                              "(--preset streaming), i.e. input_terms=None")
        if not self._scores_causally():
            name = self.embedder if isinstance(self.embedder, str) else type(self.embedder).__name__
            why = "window-level scores (score_type='window')" if self.net_.embedder.causal else f"a non-causal embedder ({name})"
            raise StreamError(f"streaming needs step t's score to read steps <= t only; this model has {why}: score whole series with decision_function")
        return StreamScorer(self)

    def row_stepper(self) -> DilatedRNNSteps | None:
        """The stream's one-row-at-a-time path through the embedder (:mod:`madcluster.embedders.drnn_steps`),
        or None where the embedder has none (then every chunk reruns its windows)."""
        if not self._scores_causally() or not DilatedRNNSteps.supports(self.net_.embedder, self.net_.precision):
            return None
        return DilatedRNNSteps(self.net_.embedder, self.window_size, self._score_stride(), MIN_SCORING_BATCH)

    def model_input(self, rows: np.ndarray) -> np.ndarray:
        """Checked ``rows`` as the network's input (scaled, roughness channels added)."""
        return self._model_input(rows)

    def score_features(self, h: torch.Tensor, steps: np.ndarray) -> np.ndarray:
        """Scores of stream ``steps`` from their features ``h [m, f]`` (each from the window that
        scores its step): the head's terms, combined and warm-up calibrated as in :meth:`score_with_history`."""
        n = len(h)
        if n < MIN_SCORING_BATCH:  # padded as causal_point_outputs pads its batches
            h = torch.cat([h, h[-1:].expand(MIN_SCORING_BATCH - n, -1)])
        with torch.inference_mode():
            terms = self.net_.head.score_terms(h[:, None, :])
        values = {name: v[:n, 0].float().cpu().numpy().astype(np.float64) for name, v in terms.items()}
        return self._calibrate_warmup(self._combine(values), self._warmup_positions(steps))

    def history_start(self, step: int) -> int:
        """The earliest step that scoring ``step`` (and any later one) reads, for a causal model:
        its window's start, less the roughness channels' reach."""
        return max(0, int(causal_window_of(np.asarray([step]), self.window_size, self._score_stride())[0]) - self.roughness_window_)

    def model_windows(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """The windows ``[N, L, width]`` (float32 model input) that :meth:`decision_function`
        scores for ``X`` and their start rows: the input of the ONNX graph (:mod:`madcluster.estimator.export`)."""
        series = torch.from_numpy(self._checked_input(X))
        if self._scores_causally():
            starts = np.unique(causal_window_of(np.arange(len(series)), self.window_size, self._score_stride()))
        else:
            starts = window_starts(len(series), self.window_size, self._score_stride())
        return gather_windows(pad_for_windows(series, starts, self.window_size), starts, self.window_size).numpy(), starts

    def score_terms(self, X: Any) -> dict[str, np.ndarray]:
        """The named per-step terms (T,) :meth:`decision_function` combines: the head's, and
        ``base`` when the embedder has its own score."""
        return self._point_outputs(self._checked_input(X), self.net_.score)

    def embed(self, X: Any) -> np.ndarray:
        """The Base Embedder's features h, one vector per row of ``X``: ``(T, f)``.

        Windows and the window-to-point mapping are exactly those of :meth:`decision_function`, so
        ``embed(X)[t]`` is the h behind the score of step t (the paper's figures plot these).
        """
        return self._point_outputs(self._checked_input(X), lambda x: {"h": self.net_(x).h})["h"]

    def explain(self, X: Any, rows: Any = None) -> np.ndarray:
        """Per-channel contributions to the score, ``(T, D)``: how much more than on normal data
        channel j is behind ``decision_function(X)[t]``, the z-score of the score drop when it is
        held at its training mean (occlusion) plus that of its input deviation (why and what it
        costs: :mod:`madcluster.estimator.attribution`). Large positive values name the channels behind an
        alert. ``rows`` (a boolean mask, e.g. ``scores > threshold_``) explains only those steps
        (the others are 0), scoring only the spans around them."""
        inputs = self._checked_input(X)
        groups = channel_groups(self.n_features_in_, inputs.shape[1])
        baseline = self.attribution_baseline_

        def explain_span(span: np.ndarray) -> np.ndarray:
            occlusion = occlusion_contributions(self._score_model_input, span, groups)
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

    def _score_model_input(self, scaled: np.ndarray) -> np.ndarray:
        """:meth:`decision_function`'s path from model input (a series starting at step 0) to scores."""
        terms = self._point_outputs(scaled, self.net_.score)
        return self._calibrate_warmup(self._combine(terms), self._warmup_positions(np.arange(len(scaled))))

    def _fit_attribution_baseline(self, scaled: np.ndarray) -> np.ndarray:
        """What :meth:`explain`'s terms are on the training series (:func:`madcluster.estimator.attribution.fit_baseline`)."""
        return fit_baseline(self._score_model_input, scaled, channel_groups(self.n_features_in_, scaled.shape[1]))

    def _checked_input(self, X: Any) -> np.ndarray:
        """``X`` checked against the training columns, as the network's input."""
        return self._model_input(self.check_rows(X))

    def _point_outputs(self, scaled: np.ndarray, read: Any, first_step: int = 0, score_from: int = 0) -> dict[str, np.ndarray]:
        net = self.net_.eval()
        series = torch.from_numpy(scaled).to(next(net.parameters()).device)
        with torch_threads(self.n_jobs):
            if self._scores_causally():
                return causal_point_outputs(read, series, self.window_size, self._score_stride(), 4 * self.batch_size, first_step, score_from)
            return point_outputs(read, series, self.window_size, self._score_stride(), 4 * self.batch_size, net.embedder.causal)

    def _score_stride(self) -> int:
        causal = self.net_.embedder.causal
        return int(self.score_stride) if self.score_stride is not None else default_score_stride(self.window_size, causal)

    def _scores_causally(self) -> bool:
        """Whether step t's score reads steps <= t only (a causal embedder, per-step scores): then
        windows follow the fixed grid of ``causal_window_of``, the warm-up is calibrated and rows
        can stream."""
        return bool(self.net_.embedder.causal) and self.score_type == "point"

    def _warmup_reference_from(self) -> int:
        """First window position that steps after the first window use: L - s (0 if not causal)."""
        return self.window_size - self._score_stride() if self._scores_causally() else 0

    def _warmup_positions(self, steps: np.ndarray) -> np.ndarray:
        """Each step's position in the window that scores it (its history, for causal models)."""
        if not self._scores_causally():
            return np.full(len(steps), self.window_size - 1)
        return steps - causal_window_of(steps, self.window_size, self._score_stride())

    def _fit_warmup(self, data: np.ndarray) -> np.ndarray:
        """Quantiles of the score per window position (:mod:`madcluster.estimator.warmup`), on training
        windows each scored as the start of a fresh series (model input built from the window alone)."""
        starts = sample_starts(len(data), self.window_size, WARMUP_WINDOWS)
        fresh = np.stack([self._model_input(data[s : s + self.window_size]) for s in starts])
        with torch.no_grad():
            terms = self.net_.eval().score(torch.from_numpy(fresh).to(next(self.net_.parameters()).device))
        scores = self._combine({name: values.float().cpu().numpy().astype(np.float64) for name, values in terms.items()})
        return fit_quantile_table(scores, self._warmup_reference_from())

    def _calibrate_warmup(self, scores: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """Warm-up calibrated scores (unchanged for non-causal models)."""
        table = self.warmup_quantiles_
        return scores if table is None else calibrate(scores, positions, table, self._warmup_reference_from())

    def combine_terms(self, terms: dict[str, Any]) -> Any:
        """The score from its named terms, numpy arrays or torch tensors alike (:func:`madcluster.score.scoring.combine`)."""
        return combine(terms, self.score_stats_, self.score_scaling, self.base_score_combination)

    def _combine(self, terms: dict[str, np.ndarray]) -> np.ndarray:
        return combine_scores(terms, self.score_stats_, self.score_scaling, self.base_score_combination)

    def _input_terms(self) -> list[Any]:
        """The fitted input terms (:mod:`madcluster.score.input_terms`); none when off."""
        return self.input_terms_

    def _with_input_terms(self, scores: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """``scores`` of all of checked ``rows`` plus the input terms, all standardised (unchanged without terms)."""
        terms = self._input_terms()
        return add_input_terms(scores, rows, terms, self.score_stats_) if terms else scores

    def _model_input(self, data: np.ndarray) -> np.ndarray:
        return model_input(data, self.scaler_mean_, self.scaler_scale_, self.roughness_window_)

    def _fit_training_scores(self, data: np.ndarray, scaled: np.ndarray) -> None:
        """After training: the terms' statistics (steady rows only), the warm-up table, the
        training scores behind ``threshold_`` and :meth:`explain`'s baseline."""
        terms = self._point_outputs(scaled, self.net_.score)
        positions = self._warmup_positions(np.arange(len(scaled)))
        steady = positions >= self._warmup_reference_from()  # warm-up rows are calibrated, not counted
        self.score_stats_ = score_statistics({n: v[steady] for n, v in terms.items()}, self.score_scaling)
        self.warmup_quantiles_ = self._fit_warmup(data) if self._scores_causally() else None
        scores = self._calibrate_warmup(self._combine(terms), positions)
        # base-only is the base model alone (Table 1's "alone" rows): no terms beside its score
        names = () if self.mode == "base-only" else check_input_terms(self.input_terms)
        self.input_terms_ = fit_input_terms(names, data, self.window_size, self.random_state)
        if self.input_terms_:
            self.score_stats_.update(input_term_stats(scores, data, self.input_terms_))
            scores = self._with_input_terms(scores, data)
        self._set_training_scores(scores)
        self.attribution_baseline_ = self._fit_attribution_baseline(scaled)
