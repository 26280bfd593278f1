"""Streaming scores: rows arrive in chunks of any size, each new row gets its score at once.

::

    scorer = detector.stream()
    for chunk in incoming:                    # (m, D) with m >= 1
        result = scorer.update(chunk)         # result.scores, result.flags: one per new row
        result.final_steps, result.final_scores   # the steps whose score is now final
        result.incidents_opened, result.incidents_closed   # docs/incidents.md
    scorer.save("stream.mcs")  # later: StreamScorer.restore(detector.model_, "stream.mcs")

With the default input terms (:mod:`madcluster.score.combination`) the window-KMeans term
averages windows that end up to L - 1 steps later, so a row is answered twice: at once with its
at-once score (every part read from steps <= t: the KMeans part from the windows that will cover
t, as far as they go, :mod:`madcluster.score.kmeans_prefix`; the discord part from its shortest
subsequence ending at t, :mod:`madcluster.score.discord`), and L rows later with its final score, exactly the whole series' (:meth:`StreamScorer.pending` gives the
not yet final ones as ``decision_function`` gives them on the rows so far). Without input terms
(``--preset streaming``) every score is final at once; with the ridge term alone, once the centred
means of the point-wise parts are fixed (a few rows; none with
``part_smoothing={"own": 1, "ar": 1}``).

A causal model scores step t from one window on a fixed grid (``causal_window_of``), reading steps
<= t only, so the scorer keeps just that window's rows (plus the roughness channels' reach) and
calls the detector's own scoring path on them: fed a series in chunks, it gives the scores
``decision_function`` gives on the whole series, warm-up calibration included. For the D-RNN,
chunks of up to ``STEP_ROWS`` rows instead take one recurrent step per layer and row through the
open windows' cached states (:mod:`madcluster.embedders.drnn_steps`), the same numbers at a
sixth of the cost per row. A state file is a
zip of JSON and ``.npz`` (never a pickle), written atomically, and names the model it belongs to
(:mod:`madcluster.estimator.stream_state`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from madcluster.data.window_grid import causal_window_of
from madcluster.embedders import embedder_name
from madcluster.embedders.drnn_steps import DilatedRNNSteps
from madcluster.estimator.archive import write_archive
from madcluster.estimator.fitted import FittedModel
from madcluster.estimator.incident_scoring import StreamIncidents, default_incident_policy
from madcluster.estimator.stream_state import STATE_FILE, check_belongs, model_prints, read_state
from madcluster.exceptions import ParameterError, StreamError
from madcluster.incidents.policy import Incident, IncidentPolicy
from madcluster.score.combination_stream import CombinationStream
from madcluster.score.scoring import MIN_SCORING_BATCH
from madcluster.threads import DEFAULT_N_JOBS, torch_threads

# Chunks of up to this many rows go row by row through the model's stepper (one recurrent step
# per layer and row); longer ones rerun their windows, cheaper from about 12 rows on (default model,
# CPU ms per chunk of 8 / 12 / 16 rows, benchmarks/results/stream_latency.json: stepping 4.1 / 5.3 /
# 7.0, rerunning 5.8 / 5.8 / 5.6).
STEP_ROWS = 12


@dataclass(frozen=True)
class StreamResult:
    """Scores of the rows just added: ``steps`` (their index in the stream), ``scores`` (at once:
    read from steps <= t), and ``flags`` (score > the model's threshold); and the steps whose
    scores became final with this update (``final_*``: the new rows themselves where every part is
    causal; with the KMeans term, the rows L steps back, the whole series' scores); the incidents
    this update opened, closed and confirmed or refuted (``incidents_*``,
    :mod:`madcluster.incidents`)."""

    steps: np.ndarray
    scores: np.ndarray
    flags: np.ndarray
    final_steps: np.ndarray
    final_scores: np.ndarray
    final_flags: np.ndarray
    incidents_opened: tuple[Incident, ...] = ()
    incidents_closed: tuple[Incident, ...] = ()
    incidents_confirmed: tuple[Incident, ...] = ()
    incident_open: bool = False  # after this update


class StreamScorer:
    """Scores a growing series chunk by chunk; see the module docstring. Build with
    :meth:`MADCluster.stream <madcluster.estimator.detector.MADCluster.stream>`."""

    def __init__(
        self,
        model: FittedModel,
        step_rows: int = STEP_ROWS,
        n_jobs: int | None = DEFAULT_N_JOBS,
        incident_policy: IncidentPolicy | None = None,
    ) -> None:
        """``model``: a fitted model that streams (a causal one, ``model.grid.causal``);
        ``step_rows``: chunks up to this many rows take the stepper (0: every chunk reruns its
        windows);
        ``n_jobs``: torch threads while scoring, as the estimator's; ``incident_policy``: the
        incidents' (None: the model's default, :func:`default_incident_policy`)."""
        if not model.grid.causal:
            why = (
                "window-level scores (score_type='window')"
                if model.net.embedder.causal
                else f"a non-causal embedder ({embedder_name(model.net.embedder)})"
            )
            raise StreamError(
                f"streaming needs step t's score to read steps <= t only; this model has {why}: "
                "score whole series with decision_function"
            )
        if model.net.head.terms_read_the_window:
            raise StreamError(
                "streaming needs step t's score to read steps <= t only; with n_clusters > 1 a "
                "step's cluster term reads its whole window (DEC's target): score whole series "
                "with decision_function"
            )
        self.model = model
        self.step_rows = step_rows
        self.n_jobs = n_jobs
        self.n_features = int(model.inputs.n_features)
        self._buffer = np.empty((0, self.n_features), dtype=np.float32)
        self._buffer_start = 0  # stream step of the buffer's first row
        self.steps_seen = 0
        self._stepper = row_stepper(model)
        # the step the stepper expects next; None: out of sync
        self._stepper_next: int | None = None
        self._last_row: np.ndarray | None = None  # the last row as given (constant columns' steps)
        # constant training columns whose move was logged (once a stream)
        self._warned: set[int] = set()
        # model_prints(model), once the state is first saved
        self._prints: dict[str, str] | None = None
        combination = model.combination
        self._terms = CombinationStream(combination) if combination.combines else None
        self._incidents = StreamIncidents(model, incident_policy or default_incident_policy(model))

    def update(self, rows: Any) -> StreamResult:
        """Append ``rows`` (one row ``(D,)`` or a chunk ``(m, D)``) and score each of them."""
        rows = np.asarray(rows) if isinstance(rows, (list, tuple)) else rows
        if getattr(rows, "ndim", 2) == 1:
            rows = np.asarray(rows)[None, :]
        raw = self.model.inputs.validate_rows(rows, min_length=1, name="rows")
        # a constant training column enters as its steps: the first row's from the last row seen
        chunk = self.model.inputs.bound_constant_columns(raw, self._last_row, self._warned)
        self._last_row = raw[-1]
        buffer = np.concatenate([self._buffer, chunk])
        first_new = self.steps_seen
        with torch_threads(self.n_jobs):  # as the estimator's own scoring runs
            if self._stepper is not None and len(chunk) <= self.step_rows:
                scores = self._score_by_steps(buffer, first_new)
            else:
                scores = self.model.own_scores(
                    self.model.inputs.model_input(buffer), self._buffer_start, first_new
                )
                self._stepper_next = None
        self.steps_seen += len(chunk)
        keep_from = history_start(self.model, self.steps_seen)
        self._buffer = buffer[keep_from - self._buffer_start :]
        self._buffer_start = keep_from
        steps, final_from, final = np.arange(first_new, self.steps_seen), first_new, scores
        if self._terms is not None:
            update = self._terms.update(scores, chunk)
            scores, final_from, final = update.scores, update.final_from, update.final_scores
        threshold = self.model.threshold
        final_steps = np.arange(final_from, final_from + len(final))
        changes = self._incidents.update(chunk, scores, final_steps, final)
        return StreamResult(
            steps=steps,
            scores=scores,
            flags=scores > threshold,
            final_steps=final_steps,
            final_scores=final,
            final_flags=final > threshold,
            incidents_opened=changes.opened,
            incidents_closed=changes.closed,
            incidents_confirmed=changes.confirmed,
            incident_open=self._incidents.tracker.open_incident is not None,
        )

    @property
    def incidents(self) -> list[Incident]:
        """The stream's incidents, oldest first (the latest ``policy.KEPT_INCIDENTS``)."""
        return self._incidents.incidents

    def pending(self) -> StreamResult:
        """The steps whose scores are not final yet, scored on the rows so far: with the final
        scores given so far, ``decision_function`` of the whole stream (empty where every part is
        causal). Its ``final_*`` fields are empty."""
        if self._terms is None:
            steps, scores = np.arange(self.steps_seen, self.steps_seen), np.empty(0)
        else:
            steps, scores = (
                np.arange(self._terms.pending_from, self.steps_seen),
                self._terms.pending_scores(),
            )
        flags = scores > self.model.threshold
        none = np.empty(0, dtype=np.int64)
        return StreamResult(steps, scores, flags, none, np.empty(0), np.empty(0, dtype=bool))

    def _score_by_steps(self, buffer: np.ndarray, first_new: int) -> np.ndarray:
        """Scores of the buffer's rows from ``first_new`` on, one stepper step each. A stepper out
        of sync (a new stream, a long chunk, a restored state) first replays the open windows'
        rows, which the buffer holds (it reaches back to the window of ``first_new``)."""
        assert self._stepper is not None
        stepper, reach = self._stepper, self.model.inputs.roughness_window
        in_sync = self._stepper_next == first_new
        replay_from = first_new if in_sync else stepper.window_of(first_new)
        # with the roughness channels' history
        rows_from = max(self._buffer_start, replay_from - reach)
        inputs = torch.from_numpy(
            self.model.inputs.model_input(buffer[rows_from - self._buffer_start :])
        ).to(stepper.device)
        steps = np.arange(first_new, self._buffer_start + len(buffer))
        if not in_sync:
            stepper.replay(inputs[replay_from - rows_from : first_new - rows_from], replay_from)
        features = torch.stack(
            [stepper.advance(inputs[step - rows_from], step) for step in steps.tolist()]
        )
        self._stepper_next = int(steps[-1]) + 1
        return score_features(self.model, features, steps)

    @property
    def buffered_rows(self) -> int:
        """Rows kept as history (at most a window, a score stride and the roughness reach)."""
        return len(self._buffer)

    # ------------------------------------------------------------------ state files
    def save(
        self,
        path: str | os.PathLike,
        state: tuple[dict[str, Any], dict[str, np.ndarray]] | None = None,
    ) -> None:
        """Write the stream's state (or a :meth:`state` taken earlier) to ``path`` atomically
        (zip of JSON + npz, no pickle)."""
        write_archive(path, STATE_FILE, *(state if state is not None else self.state()))

    def state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """What :meth:`save` writes, copied: a server takes it under the stream's lock and writes
        the file (milliseconds of I/O) after releasing it. The model's fingerprint is computed
        once."""
        if self._prints is None:
            self._prints = model_prints(self.model)
        meta = {
            **self._prints,
            "steps_seen": self.steps_seen,
            "buffer_start": self._buffer_start,
            "incidents": self._incidents.state(),
        }
        # None: no row seen yet
        last = {} if self._last_row is None else {"last_row": self._last_row}
        terms = {} if self._terms is None else self._terms.state()
        return meta, {
            name: np.array(value, copy=True)
            for name, value in {
                "buffer": self._buffer,
                "incident_rows": self._incidents.recent,
                **last,
                **terms,
            }.items()
        }

    @classmethod
    def restore(
        cls, model: Any, path: str | os.PathLike, n_jobs: int | None = DEFAULT_N_JOBS
    ) -> StreamScorer:
        """A scorer that goes on where the one saved to ``path`` stopped, for the same fitted
        ``model`` (a FittedModel or the fitted detector holding it as ``model_``; ``n_jobs``: torch
        threads while scoring, as the estimator's)."""
        meta, buffer, last_row, arrays = read_state(path)
        steps_seen, buffer_start = meta["steps_seen"], meta["buffer_start"]
        fitted = getattr(model, "model_", model)
        if not isinstance(fitted, FittedModel):
            raise StreamError(
                f"restore takes a fitted detector or its model_, got {type(model).__name__}"
            )
        check_belongs(meta, fitted, path)
        scorer = cls(fitted, n_jobs=n_jobs)
        if (
            buffer.ndim != 2
            or buffer.shape[1] != scorer.n_features
            or buffer_start + len(buffer) != steps_seen
        ):
            raise StreamError(
                f"{os.fspath(path)!r} is inconsistent (buffer {buffer.shape}, {steps_seen} steps)"
            )
        scorer._buffer, scorer._buffer_start, scorer.steps_seen = (
            buffer.astype(np.float32),
            buffer_start,
            steps_seen,
        )
        scorer._last_row = last_row  # None: constant columns step from their training value
        if scorer._terms is not None:
            try:
                scorer._terms.load(arrays)
            except (KeyError, TypeError, ValueError) as exc:
                raise StreamError(
                    f"{os.fspath(path)!r} lacks the input terms' stream state ({exc})"
                ) from None
            if scorer._terms.steps_seen != steps_seen:
                raise StreamError(
                    f"{os.fspath(path)!r} is inconsistent (terms at step "
                    f"{scorer._terms.steps_seen}, {steps_seen} steps)"
                )
        final_from = steps_seen if scorer._terms is None else scorer._terms.pending_from
        try:  # a file from before incidents starts none, at its step
            state, rows = meta.get("incidents"), arrays.get("incident_rows")
            scorer._incidents.restore(state, rows, steps_seen, final_from)
        except (ParameterError, KeyError, TypeError, ValueError) as exc:
            raise StreamError(f"{os.fspath(path)!r} holds unreadable incidents ({exc})") from None
        return scorer


def row_stepper(model: FittedModel) -> DilatedRNNSteps | None:
    """The stream's one-row-at-a-time path through the embedder
    (:mod:`madcluster.embedders.drnn_steps`), or None where the embedder has none (then every chunk
    reruns its windows)."""
    if not model.grid.causal or not DilatedRNNSteps.supports(
        model.net.embedder, model.net.precision
    ):
        return None
    grid = model.grid
    return DilatedRNNSteps(
        model.scoring_net.embedder, grid.window_size, grid.score_stride, MIN_SCORING_BATCH
    )


def score_features(model: FittedModel, h: torch.Tensor, steps: np.ndarray) -> np.ndarray:
    """Own scores of stream ``steps`` from their features ``h [m, f]`` (each from the window that
    scores its step): the head's terms, combined and warm-up calibrated as
    :meth:`FittedModel.own_scores`."""
    n = len(h)
    if n < MIN_SCORING_BATCH:  # padded as causal_point_outputs pads its batches
        h = torch.cat([h, h[-1:].expand(MIN_SCORING_BATCH - n, -1)])
    with torch.inference_mode():
        terms = model.scoring_net.head.score_terms(h[:, None, :])
    values = {name: v[:n, 0].double().cpu().numpy() for name, v in terms.items()}
    return model.warmup.calibrate(model.head.combine(values), model.warmup.positions(steps))


def history_start(model: FittedModel, step: int) -> int:
    """The earliest step that scoring ``step`` (and any later one) reads, for a causal model:
    its window's start, less the roughness channels' reach."""
    grid = model.grid
    start = int(causal_window_of(np.asarray([step]), grid.window_size, grid.score_stride)[0])
    return max(0, start - model.inputs.roughness_window)


__all__ = ["StreamResult", "StreamScorer"]
