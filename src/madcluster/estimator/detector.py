"""The MADCluster estimator: ``fit`` / ``decision_function`` / ``predict`` / ``save`` / ``load``.

Scikit-learn / PyOD style: ``__init__`` only stores parameters; everything learned ends in ``_``,
read from the frozen fitted model ``model_`` (:mod:`madcluster.estimator.fitted`) and the training
record beside it, both made by :func:`madcluster.estimator.fitting.fit` (a fit's steps, start to
finish); training: :mod:`madcluster.training.loop`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import numpy as np
from torch import nn

from madcluster.base import BaseDetector
from madcluster.data.validation import check_series
from madcluster.defaults import REFIT_EPOCHS, defaults
from madcluster.embedders import EMBEDDERS
from madcluster.estimator import fitting
from madcluster.estimator.attribution import explain
from madcluster.estimator.deprecated import DeprecatedAlias
from madcluster.estimator.far_columns import warn_far_columns
from madcluster.estimator.fitted import FittedModel, TrainingRecord, embed, score_terms
from madcluster.estimator.fitted_attributes import FittedAttributes
from madcluster.estimator.incident_scoring import incident_table
from madcluster.estimator.network import method_config
from madcluster.estimator.params import MADCLUSTER_PARAMS, check_madcluster_params
from madcluster.estimator.persistence import load_model, save_model
from madcluster.estimator.streaming import StreamScorer
from madcluster.exceptions import ParameterError
from madcluster.presets import preset_params
from madcluster.threads import torch_threads

_D = defaults(MADCLUSTER_PARAMS)  # the signature's defaults, written once in the table


class MADCluster(FittedAttributes, BaseDetector):
    """MADCluster (Lee et al.): a Base Embedder trained with Cluster Distance Mapping and
    Sequence-wise Clustering; anomaly score per time step (paper Eq. 7).

    Parameters
    ----------
    embedder : registered name (``"drnn"``) or your own ``nn.Module`` mapping ``[B, L, D]`` to
        ``h [B, L, f]`` (or a :class:`~madcluster.embedders.BaseEmbedder`).
    embedder_params : keyword arguments of the registered embedder, e.g. ``{"hidden_size": 64}``.
    window_size : window length L (the paper's).
    stride : step between training windows (1 = every window; larger trains faster).
    score_stride : step between scoring windows. Default: ``window_size // 10`` for causal
        embedders (the D-RNN), where each point is scored from the window in which it has the most
        history (at least L - score_stride steps), and ``window_size`` otherwise (overlaps
        averaged).
    epochs, batch_size, lr, weight_decay : optimisation (Adam; weight decay is lambda * Omega(W));
        ``epochs`` is the maximum (20; validation early stopping usually ends sooner).
        ``batch_size`` ``"auto"``: the embedder class's ``training_batch`` (the D-RNN: 32, whose
        step costs about the same at any batch on a CPU; the others and a custom module: 128).
    validation_size : fraction at the END of the training series used for early stopping (never
        test data); 0 disables early stopping.
    patience : epochs without validation improvement before stopping.
    mode, rho, tau, center_init, nu_param, distance_loss, cluster_target, cluster_kl,
    loss_combination, score_type, score_scaling, center_warmup : see
        :class:`~madcluster.method.MethodConfig`.
    early_stopping : ``loss`` (the total validation loss), ``base-loss`` (the base model's own
        validation loss) or ``relative-distance`` (mean max(0, d / R^2 - 1) on validation steps);
        the last two cannot be lowered by shrinking the sphere.
    pretrain_epochs : first epochs on the base model's own loss alone; the center and R are then
        initialised from the pretrained features (DeepSVDD's recipe). Counted within ``epochs``.
    n_clusters : k = 1 is the paper's method; k > 1 the appendix's multi-cluster variant.
    base_score_combination : when the embedder has its own score: ``standardized`` (z-scores from
        training statistics, summed) or ``raw`` sum.
    contamination : expected fraction of anomalies in training data; ``threshold_`` is the
        (1 - contamination) quantile of training scores (the ``train-quantile`` protocol), or with
        ``threshold="pot"`` POT's estimate of it (its risk level q).
    random_state : seed for weights and shuffling; the same seed gives the same scores.
    device : ``"auto"`` (CUDA if available), ``"cpu"``, ``"cuda"``...
    verbose : report progress on stderr: a time estimate after the first batches, then tqdm bars
        on a terminal or one line per epoch (elapsed, time left) anywhere else.
    scaling : per-feature input scaling fitted on the training series: ``standard`` (z-score) or
        ``minmax`` (training range to [0, 1], as the released code per entity; test values may
        fall outside it).
    precision : ``float32`` (default) or ``bfloat16``: mixed precision (``torch.autocast``) for the
        embedder's matrix products in training and scoring, on CPUs with bfloat16 instructions
        (AVX-512 BF16, AMX) and GPUs, where it is faster (measured in the benchmark results);
        weights, the head, the losses it sums and every score stay float32.
    roughness_window : w > 0 appends, per channel, the log of the mean squared first difference
        over the trailing w steps (``madcluster.data.features.roughness``) to what the embedder
        sees; 0 (the paper) feeds the scaled input only. Default (None): the embedder class's
        ``default_roughness_window`` (3 for the D-RNN, 0 for the others, so the base models see
        their published input; a custom module gets 0). Measured: docs/method.md.
    epoch_windows : training windows drawn (without replacement, new ones each epoch) per epoch;
        None = every window, as before (the benchmark's and the paper preset's budget). The default
        (``"auto"``: 15 batches, 480 windows for the D-RNN, 1,920 for the others) bounds an epoch's
        steps whatever the series' length (the time it saves: the benchmark results).
    threshold : how ``fit`` sets ``threshold_`` from the training scores: ``quantile`` (their
        ``1 - contamination`` quantile) or ``pot`` (peaks over threshold, Siffer et al. 2017 as in
        OmniAnomaly: a generalized Pareto tail fitted to the top 2 % of training scores, and the
        score it exceeds with probability ``contamination``; :mod:`madcluster.extreme_value`).
    n_jobs : torch CPU threads for fit and scoring, scikit-learn style: None = 1 (the default,
        right on shared machines), -1 = every core, k = k threads (:mod:`madcluster.threads`).
    input_terms : parts added to the score, fitted on the training rows: ``("kmeans", "ar",
        "discord", "cross")`` (the default: window KMeans, a ridge next-step error, each step's
        discord, and for the at-once score alone each column's error given the others at the same
        step, :mod:`madcluster.score.cross_residual`), some, or None (MADCluster's score alone, as ``paper``; a stream's scores final at once;
        with parts, L rows later); combined by ``part_rule`` (:mod:`madcluster.score.combination`).
    part_weights : by part name (the rest default); None: from the training columns, own .5 -> 1,
        kmeans 1.5 -> 1, ar 1, discord .5 -> 1, cross 1.5 as the share of columns with more than 3 values
        goes 0 -> 1 (``madcluster.score.input_terms.default_part_weights``); ``"evidence"``:
        corrected by what each part finds of anomalies injected into held-out training rows.
    part_smoothing : steps of the centred mean each point-wise part is read through before it is
        standardised (``own``, ``ar``; 1: none; the rest default); None = ``own`` L // 2, ``ar``
        L // 10 (:mod:`madcluster.score.smoothing`). Only with input terms.
    part_rule : None = ``"few-valued-tail-excess"`` (the positive sum where the training columns
        are continuous, the tail excess where they have few values, mixed by their share),
        ``"positive-zscore-sum"`` (parts below 0 add 0), ``"tail-excess-sum"`` (a part counts
        fully only beyond its training q .98), ``"zscore-sum"``, ``"zscore-max"``.
    series_scale_rows : each part's contribution to a scored series' final scores is divided by
        its spread on the series' first ``series_scale_rows`` steps (the interquartile range of
        its z-scores / 1.349, at least 1), so a part that moved on most rows cannot drown the
        others; a stream's first final scores wait for those steps. 0: off (the training scales
        alone, as files from before series scales read). Only with input terms.

    Each parameter's default and allowed values:
    :data:`madcluster.estimator.params.MADCLUSTER_PARAMS`.
    """

    _parameters = MADCLUSTER_PARAMS

    def __init__(
        self,
        embedder: str | nn.Module = _D["embedder"],
        embedder_params: dict | None = _D["embedder_params"],
        window_size: int = _D["window_size"],
        stride: int = _D["stride"],
        score_stride: int | None = _D["score_stride"],
        epochs: int = _D["epochs"],
        batch_size: int | str = _D["batch_size"],
        lr: float = _D["lr"],
        weight_decay: float = _D["weight_decay"],
        validation_size: float = _D["validation_size"],
        patience: int = _D["patience"],
        mode: str = _D["mode"],
        rho: float = _D["rho"],
        tau: float = _D["tau"],
        center_init: str = _D["center_init"],
        nu_param: str = _D["nu_param"],
        distance_loss: str = _D["distance_loss"],
        cluster_target: str = _D["cluster_target"],
        cluster_kl: bool = _D["cluster_kl"],
        loss_combination: str = _D["loss_combination"],
        score_type: str = _D["score_type"],
        score_scaling: str = _D["score_scaling"],
        center_warmup: int = _D["center_warmup"],
        early_stopping: str = _D["early_stopping"],
        pretrain_epochs: int = _D["pretrain_epochs"],
        n_clusters: int = _D["n_clusters"],
        base_score_combination: str = _D["base_score_combination"],
        contamination: float = _D["contamination"],
        random_state: int | None = _D["random_state"],
        device: str = _D["device"],
        verbose: bool = _D["verbose"],
        scaling: str = _D["scaling"],
        precision: str = _D["precision"],
        roughness_window: int | None = _D["roughness_window"],
        epoch_windows: int | str | None = _D["epoch_windows"],
        threshold: str = _D["threshold"],
        n_jobs: int | None = _D["n_jobs"],
        input_terms: tuple[str, ...] | str | None = _D["input_terms"],
        part_weights: dict[str, float] | None = _D["part_weights"],
        part_smoothing: dict[str, int] | None = _D["part_smoothing"],
        part_rule: str | None = _D["part_rule"],
        series_scale_rows: int = _D["series_scale_rows"],
    ) -> None:
        given = locals()  # every parameter stored as given, under its name (scikit-learn's rule)
        for name in MADCLUSTER_PARAMS:
            setattr(self, name, given[name])

    @classmethod
    def from_preset(cls, preset: str = "default", **params: Any) -> MADCluster:
        """A detector with a named configuration (:data:`madcluster.presets.PRESETS`); ``params``
        override it."""
        embedder = params.get("embedder", cls().embedder)
        registered = EMBEDDERS.get(embedder) if isinstance(embedder, str) else None
        return cls(**preset_params(preset, params, getattr(registered, "paper_params", {})))

    def _validate_params(self) -> None:
        """The objective's options (MethodConfig), then every other parameter against the table."""
        method_config(self.get_params(deep=False))  # a MethodConfig, or its ParameterError
        check_madcluster_params(self.get_params(deep=False))

    def fit(
        self,
        X: Any,
        y: Any = None,
        *,
        validation_data: Any = None,
        pool_radius: bool = False,
        checkpoint: str | os.PathLike | None = None,
        resume: bool = False,
        finishing: AbstractContextManager[Any] | None = None,
    ) -> MADCluster:
        """Train on ``X`` (T, D), mostly normal data; ``y`` is ignored (unsupervised).

        ``validation_data`` (T', D) replaces the end-of-train split for early stopping and the best
        checkpoint (all of ``X`` is then trained on); ``pool_radius=True`` also takes R from the
        training and validation windows pooled. Both exist only to reproduce the released code,
        which passes the TEST set here (a leak); the default never sees anything but ``X``.

        ``checkpoint`` (a file path): on Ctrl-C the training state after the last completed epoch
        is written there and :class:`~madcluster.training.checkpoint.TrainingInterrupted` (a
        ``KeyboardInterrupt``) names it; ``resume=True`` goes on from it, on the same data and
        settings (``epochs`` may change), exactly as the uninterrupted fit would have. A completed
        fit removes the file. :mod:`madcluster.training.checkpoint`. ``finishing``: a context
        manager the model is finished in after the last epoch (``madcluster fit``'s defers Ctrl-C
        and SIGTERM there, :mod:`madcluster.cli.finishing`).

        What the fit produced is one value, ``model_``
        (:class:`~madcluster.estimator.fitted.FittedModel`); beside it the estimator keeps the
        scikit-learn / PyOD attributes (``threshold_``, ``decision_scores_``, ``labels_``,
        ``n_features_in_``, ``feature_names_in_``) and the training record (``history_``,
        ``center_path_``, ``device_``).
        """
        self._validate_params()
        if resume and checkpoint is None:
            raise ParameterError("resume=True needs the checkpoint path to resume from")
        params = self.get_params(deep=False)
        with torch_threads(self.n_jobs):
            return self._hold(
                *fitting.fit(params, X, validation_data, pool_radius, checkpoint, resume, finishing)
            )

    def refit(
        self, X: Any, *, epochs: int = REFIT_EPOCHS, from_scratch: bool = False
    ) -> MADCluster:
        """Fit again on recent rows ``X`` (T, D), all normal, for a new normal after a deploy or a
        migration: the network starts from this model's weights and trains ``epochs`` epochs
        (early stopping as in :meth:`fit`), and everything after it is fitted anew from ``X``: the
        input scaling, the score's statistics and parts, the warm-up table and the threshold.
        ``X`` has the training columns (a DataFrame's matched by name) and at least one window.
        ``from_scratch=True``: a fresh network and this detector's own ``epochs``. The parameters
        do not change; ``history_`` is the refit's."""
        self._check_fitted()
        check_series(
            self._align_feature_names(X),
            min_length=self.window_size,
            n_features=self.n_features_in_,
            name="X",
        )
        if from_scratch:
            return self.fit(X)
        MADCLUSTER_PARAMS["epochs"].check("epochs", epochs)
        params, warm = self.get_params(deep=False), self.model_.net
        with torch_threads(self.n_jobs):
            return self._hold(*fitting.fit(params, X, warm=warm, epochs=epochs))

    def _hold(self, model: FittedModel, record: TrainingRecord) -> MADCluster:
        """Hold a fit's or a model file's model and record, and the attributes read from them."""
        self.model_, self.n_features_in_ = model, model.inputs.n_features
        if model.inputs.feature_names is not None:
            self.feature_names_in_ = model.inputs.feature_names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.history_, self.center_path_ = record.history, record.center_path
        self.device_, self.decision_scores_ = record.device, record.decision_scores
        self.labels_ = (self.decision_scores_ > self.threshold_).astype(np.int64)
        return self

    # ------------------------------------------------------ scoring (the fitted model's)
    def decision_function(self, X: Any) -> np.ndarray:
        """Anomaly score per row of ``X`` (T,), higher = more anomalous; exactly one per time
        step. Columns far outside their training range on most rows are named in a
        :class:`~madcluster.exceptions.FarFromTrainingWarning`."""
        self._check_fitted()
        with torch_threads(self.n_jobs):
            scores = self.model_.decision_function(X)
        # columns far outside their training range on most rows: named (FarFromTrainingWarning)
        warn_far_columns(self.model_.inputs, self.scaling, X)
        return scores

    # the old spelling of score_terms(detector.model_, X), the fitted model's terms (CHANGELOG)
    score_terms = DeprecatedAlias(
        lambda self, X: self._read(score_terms, X),
        "madcluster.estimator.fitted.score_terms(detector.model_, X)",
    )

    # the old spelling of embed(detector.model_, X), the features h behind each step's score
    embed = DeprecatedAlias(
        lambda self, X: self._read(embed, X),
        "madcluster.estimator.fitted.embed(detector.model_, X)",
    )

    def explain(self, X: Any, rows: Any = None) -> np.ndarray:
        """Per-channel contributions to the score, ``(T, D)``: how much more than on normal data
        channel j is behind ``decision_function(X)[t]``, the z-score of the score drop when it is
        held at its training mean (occlusion) plus that of its input deviation (why and what it
        costs: :mod:`madcluster.estimator.attribution`). Large positive values name the channels
        behind an alert. ``rows`` (a boolean mask, e.g. ``scores > threshold_``) explains only those
        steps (the others are 0), scoring only the spans around them."""
        return self._read(explain, X, rows)

    def stream(self) -> StreamScorer:
        """A :class:`~madcluster.estimator.streaming.StreamScorer` (rows in chunks of any size, each
        new row's score and flag out; with the KMeans input term, provisional at once and final L
        rows later); needs a causal embedder (D-RNN, DeepSVDD, OmniAnomaly, THOC) and one
        cluster."""
        self._check_fitted()
        # a StreamError for a model that does not stream
        return StreamScorer(self.model_, n_jobs=self.n_jobs)

    def incidents(self, X: Any, false_incidents: float | None = None) -> Any:
        """The incidents a stream fed ``X`` row by row raises, a DataFrame (docs/incidents.md):
        opening at the higher of the model's floor (``threshold_``, or the threshold of its
        training scores with the weights its at-once score pairs with:
        :func:`~madcluster.estimator.incident_scoring.incident_floor`) and the level the fit
        calibrated for 2 false incidents per 10,000 normal rows (in sample, optimistic, with
        fewer than 200 held-out rows), or at its level for ``false_incidents``."""
        return self._read(incident_table, X, false_incidents)

    def _read(self, function: Callable[..., Any], *args: Any) -> Any:
        """``function(model_, *args)``, of a fitted detector, in its threads."""
        self._check_fitted()
        with torch_threads(self.n_jobs):
            return function(self.model_, *args)

    # ------------------------------------------------------------------ files and cost
    def cost(self, window_size: int | None = None) -> dict[str, Any]:
        """Parameters and MACs of scoring one window (batch 1), as the paper's compute table."""
        from madcluster.compute import torch_model_cost

        self._check_fitted()
        return torch_model_cost(self.net_, window_size or self.window_size, len(self.scaler_mean_))

    def save(self, path: str | os.PathLike) -> None:
        """Write the fitted detector to ``path`` (zip of JSON config + npz weights), atomically."""
        self._check_fitted()
        # a deferred attribution baseline is measured as explain() would
        with torch_threads(self.n_jobs):
            save_model(
                path,
                self.get_params(),
                self.model_,
                decision_scores=self.decision_scores_,
                history=self.history_,
                center_path=self.center_path_,
            )

    @classmethod
    def load(
        cls, path: str | os.PathLike, *, embedder: nn.Module | None = None, device: str = "cpu"
    ) -> MADCluster:
        """Load a detector written by :meth:`save`. Models with a custom embedder need that module
        (freshly constructed, same architecture) passed as ``embedder``."""
        file = load_model(path, embedder, device)
        return cls(**file.params)._hold(file.fitted, file.record)
