"""The MADCluster estimator: ``fit`` / ``decision_function`` / ``predict`` / ``save`` / ``load``.

Scikit-learn / PyOD style: ``__init__`` only stores parameters; everything learned ends in ``_``.
The steps live in their own modules: input scaling (:mod:`madcluster.data.scaling`), training
(:mod:`madcluster.training`), scoring (:mod:`madcluster.scoring`), presets
(:mod:`madcluster.presets`) and model files (:mod:`madcluster.persistence`).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import torch
from torch import nn

from madcluster.base import BaseDetector
from madcluster.data.constant_columns import (
    constant_columns,
    hold_constant_columns,
    warn_constant_at_fit,
)
from madcluster.data.scaling import fit_input_scaler, model_input
from madcluster.data.validation import check_device, check_series
from madcluster.defaults import DEFAULT_EPOCHS, DEFAULT_WINDOW_SIZE
from madcluster.embedders import EMBEDDERS, make_embedder
from madcluster.exceptions import ParameterError
from madcluster.method.config import MethodConfig
from madcluster.method.heads import build_head, head_centers
from madcluster.params import check_params
from madcluster.persistence import load_detector, save_detector
from madcluster.presets import preset_params
from madcluster.scoring import combine_scores, default_score_stride, point_outputs, score_statistics
from madcluster.training import (
    PRECISIONS,
    MADClusterNet,
    TrainSettings,
    train_network,
    validation_rows,
)


class MADCluster(BaseDetector):
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
        history (at least L - score_stride steps), and ``window_size`` otherwise (overlaps averaged).
    epochs, batch_size, lr, weight_decay : optimisation (Adam; weight decay is lambda * Omega(W));
        ``epochs`` is the maximum (20; validation early stopping usually ends sooner).
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
        (1 - contamination) quantile of training scores (the ``train-quantile`` protocol).
    random_state : seed for weights and shuffling; the same seed gives the same scores.
    device : ``"auto"`` (CUDA if available), ``"cpu"``, ``"cuda"``...
    verbose : show progress bars.
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
        their published input; a custom module gets 0). See the README's method table.
    """

    def __init__(
        self,
        embedder: str | nn.Module = "drnn",
        embedder_params: dict | None = None,
        window_size: int = DEFAULT_WINDOW_SIZE,
        stride: int = 1,
        score_stride: int | None = None,
        epochs: int = DEFAULT_EPOCHS,
        batch_size: int = 128,
        lr: float = 1e-3,
        weight_decay: float = 1e-5,
        validation_size: float = 0.2,
        patience: int = 3,
        mode: str = "full",
        rho: float = 0.01,
        tau: float = 0.01,
        center_init: str = "mean",
        nu_param: str = "sigmoid",
        distance_loss: str = "soft-boundary",
        cluster_target: str = "threshold",
        cluster_kl: bool = False,
        loss_combination: str = "sum",
        score_type: str = "point",
        score_scaling: str = "standardized",
        center_warmup: int = 0,
        early_stopping: str = "loss",
        pretrain_epochs: int = 0,
        n_clusters: int = 1,
        base_score_combination: str = "standardized",
        contamination: float = 0.01,
        random_state: int | None = None,
        device: str = "auto",
        verbose: bool = False,
        scaling: str = "standard",
        precision: str = "float32",
        roughness_window: int | None = None,
    ) -> None:
        self.embedder = embedder
        self.embedder_params = embedder_params
        self.window_size = window_size
        self.stride = stride
        self.score_stride = score_stride
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.weight_decay = weight_decay
        self.validation_size = validation_size
        self.patience = patience
        self.mode = mode
        self.rho = rho
        self.tau = tau
        self.center_init = center_init
        self.nu_param = nu_param
        self.distance_loss = distance_loss
        self.cluster_target = cluster_target
        self.cluster_kl = cluster_kl
        self.loss_combination = loss_combination
        self.score_type = score_type
        self.score_scaling = score_scaling
        self.center_warmup = center_warmup
        self.early_stopping = early_stopping
        self.pretrain_epochs = pretrain_epochs
        self.n_clusters = n_clusters
        self.base_score_combination = base_score_combination
        self.contamination = contamination
        self.random_state = random_state
        self.device = device
        self.verbose = verbose
        self.scaling = scaling
        self.precision = precision
        self.roughness_window = roughness_window

    @classmethod
    def from_preset(cls, preset: str = "default", **params: Any) -> MADCluster:
        """A detector with a named configuration (:data:`madcluster.presets.PRESETS`); ``params``
        override it."""
        embedder = params.get("embedder", cls().embedder)
        registered = EMBEDDERS.get(embedder) if isinstance(embedder, str) else None
        return cls(**preset_params(preset, params, getattr(registered, "paper_params", {})))

    def method_config(self) -> MethodConfig:
        """The objective options as a validated :class:`MethodConfig`."""
        return MethodConfig(**{name: getattr(self, name) for name in MethodConfig.field_names() if name != "eps"})

    def fit(self, X: Any, y: Any = None, *, validation_data: Any = None, pool_radius: bool = False) -> MADCluster:
        """Train on ``X`` (T, D), mostly normal data; ``y`` is ignored (unsupervised).

        ``validation_data`` (T', D) replaces the end-of-train split for early stopping and the best
        checkpoint (all of ``X`` is then trained on); ``pool_radius=True`` also takes R from the
        training and validation windows pooled. Both exist only to reproduce the released code,
        which passes the TEST set here (a leak); the default never sees anything but ``X``.
        """
        self.method_config()
        check_params(self.get_params())
        data = check_series(X, min_length=self.window_size, name="X")
        self.n_features_in_ = data.shape[1]
        self._record_feature_names(X)
        if pool_radius and validation_data is None:
            raise ParameterError("pool_radius=True needs validation_data")
        self.roughness_window_ = self._resolve_roughness()
        self.scaler_mean_, self.scaler_scale_ = fit_input_scaler(data, self.scaling, self.roughness_window_)
        self.constant_columns_ = constant_columns(data)
        warn_constant_at_fit(self.constant_columns_, self.scaler_mean_, getattr(self, "feature_names_in_", None))
        scaled = self._model_input(data)
        extra_val = None
        if validation_data is not None:
            extra_val = self._model_input(check_series(
                self._align_feature_names(validation_data), min_length=self.window_size,
                n_features=self.n_features_in_, name="validation_data",
            ))

        n_val = 0 if extra_val is not None else validation_rows(len(scaled), self.validation_size, self.window_size)
        device = check_device(self.device)  # one-line DeviceError for e.g. cuda on CPU-only torch
        self.device_ = str(device)
        with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
            if self.random_state is not None:
                torch.manual_seed(self.random_state)
            generator = torch.Generator().manual_seed(self.random_state if self.random_state is not None else int(torch.seed() % 2**63))
            self.net_ = self._build_network().to(device)
            series = torch.from_numpy(scaled).to(device)
            train_part = series[: len(series) - n_val]
            val_part = series[len(series) - n_val :] if n_val else None
            if extra_val is not None:
                val_part = torch.from_numpy(extra_val).to(device)
            settings = TrainSettings(**{k: getattr(self, k) for k in TrainSettings.from_estimator}, progress=bool(self.verbose))
            path: list[np.ndarray] = []
            self.history_ = train_network(
                self.net_, train_part, val_part, settings, generator,
                observe_epoch=lambda epoch, net: path.extend(head_centers(net.head)),
                radius_extra=val_part if pool_radius else None,
            )
        # c after epoch pretrain_epochs + i (row 0: its initial value); None for base-only
        self.center_path_ = np.stack(path) if path else None

        terms = self._point_outputs(scaled, self.net_.score)
        self.score_stats_ = score_statistics(terms, self.score_scaling)
        self._set_training_scores(self._combine(terms))
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        """Anomaly score per row of ``X`` (T,), higher = more anomalous; exactly one per time step."""
        return self._combine(self.score_terms(X))

    def score_terms(self, X: Any) -> dict[str, np.ndarray]:
        """The named per-step terms (T,) :meth:`decision_function` combines: the head's, and
        ``base`` when the embedder has its own score."""
        return self._point_outputs(self._checked_input(X), self.net_.score)

    def explain(self, X: Any, rows: Any = None) -> np.ndarray:
        """Per-channel contributions to the score, ``(T, D)``: how much of ``decision_function(X)[t]``
        goes away when channel j is held at its training mean (occlusion; why and what it costs:
        :mod:`madcluster.attribution`). Large positive values name the channels behind an alert.
        ``rows`` (a boolean mask, e.g. ``scores > threshold_``) explains only those steps (the
        others are 0), scoring only the spans around them."""
        from madcluster.attribution import channel_groups, occlusion_contributions, spans_around

        inputs = self._checked_input(X)
        groups = channel_groups(self.n_features_in_, inputs.shape[1])

        def score(m: np.ndarray) -> np.ndarray:
            return self._combine(self._point_outputs(m, self.net_.score))

        if rows is None:
            return occlusion_contributions(score, inputs, groups)
        mask = np.asarray(rows, dtype=bool)
        if mask.shape != (len(inputs),):
            raise ParameterError(f"rows must be a boolean mask of the {len(inputs)} rows, got shape {mask.shape}")
        out = np.zeros((len(inputs), len(groups)))
        for start, end in spans_around(mask, self.window_size, len(inputs)):
            out[start:end] = occlusion_contributions(score, inputs[start:end], groups)
        out[~mask] = 0.0
        return out

    def embed(self, X: Any) -> np.ndarray:
        """The Base Embedder's features h, one vector per row of ``X``: ``(T, f)``.

        Windows and the window-to-point mapping are exactly those of :meth:`decision_function`, so
        ``embed(X)[t]`` is the h behind the score of step t (the paper's figures plot these).
        """
        return self._point_outputs(self._checked_input(X), lambda x: {"h": self.net_(x).h})["h"]

    def _checked_input(self, X: Any) -> np.ndarray:
        """``X`` checked against the training columns, as the network's input."""
        self._check_fitted()
        X = self._align_feature_names(X)
        data = check_series(X, min_length=self.window_size, n_features=self.n_features_in_, name="X")
        held = getattr(self, "constant_columns_", np.empty(0, dtype=np.int64))  # absent in older files
        data = hold_constant_columns(data, held, self.scaler_mean_, getattr(self, "feature_names_in_", None))
        return self._model_input(data)

    def _point_outputs(self, scaled: np.ndarray, read: Any) -> dict[str, np.ndarray]:
        net = self.net_.eval()
        series = torch.from_numpy(scaled).to(next(net.parameters()).device)
        causal = net.embedder.causal
        stride = int(self.score_stride) if self.score_stride is not None else default_score_stride(self.window_size, causal)
        return point_outputs(read, series, self.window_size, stride, 4 * self.batch_size, causal)

    def _combine(self, terms: dict[str, np.ndarray]) -> np.ndarray:
        return combine_scores(terms, self.score_stats_, self.score_scaling, self.base_score_combination)

    def _model_input(self, data: np.ndarray) -> np.ndarray:
        return model_input(data, self.scaler_mean_, self.scaler_scale_, self.roughness_window_)

    def _resolve_roughness(self) -> int:
        """``roughness_window``, with None resolved to the embedder class's default (0 for a module)."""
        if self.roughness_window is not None:
            return int(self.roughness_window)
        registered = EMBEDDERS.get(self.embedder) if isinstance(self.embedder, str) else None
        return int(getattr(registered, "default_roughness_window", 0))

    def _build_network(self, n_hidden: int | None = None) -> MADClusterNet:
        """Embedder and head for this detector's input width (D, or 2D with roughness channels)."""
        embedder = make_embedder(self.embedder, len(self.scaler_mean_), self.window_size, self.embedder_params)
        head = build_head(n_hidden or embedder.out_features, self.method_config())
        return MADClusterNet(embedder, head, PRECISIONS[self.precision])

    def restore_network(self, n_hidden: int, state: dict[str, torch.Tensor]) -> None:
        """Rebuild the network of a loaded model (scaler already set) and load its weights."""
        self.roughness_window_ = self._resolve_roughness()
        net = self._build_network(n_hidden)
        net.load_state_dict(state, strict=True)
        device = check_device(self.device)
        self.net_ = net.to(device).eval()
        self.device_ = str(device)

    def cost(self, window_size: int | None = None) -> dict[str, Any]:
        """Parameters and MACs of scoring one window (batch 1), as the paper's compute table."""
        from madcluster.compute import torch_model_cost

        self._check_fitted()
        return torch_model_cost(self.net_, window_size or self.window_size, len(self.scaler_mean_))

    def save(self, path: str | os.PathLike) -> None:
        """Write the fitted detector to ``path`` (zip of JSON config + npz weights), atomically."""
        self._check_fitted()
        save_detector(self, path)

    @classmethod
    def load(cls, path: str | os.PathLike, *, embedder: nn.Module | None = None, device: str = "cpu") -> MADCluster:
        """Load a detector written by :meth:`save`. Models with a custom embedder need that module
        (freshly constructed, same architecture) passed as ``embedder``."""
        return load_detector(cls, path, embedder, device)

