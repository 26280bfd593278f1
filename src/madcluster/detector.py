"""The MADCluster estimator: ``fit`` / ``decision_function`` / ``predict`` / ``save`` / ``load``.

Scikit-learn / PyOD style: ``__init__`` only stores parameters; everything learned ends in ``_``.
"""

from __future__ import annotations

import copy
import logging
import os
from typing import Any

import numpy as np
import torch
from torch import nn

from madcluster.base import BaseDetector
from madcluster.data.features import roughness
from madcluster.data.validation import check_device, check_positive_int, check_series
from madcluster.data.windows import (
    gather_windows,
    window_starts,
    windows_to_points,
    windows_to_points_with_history,
)
from madcluster.embedders import BaseEmbedder, ModuleEmbedder, build_embedder
from madcluster.exceptions import DataError, ModelFileError
from madcluster.method.config import MethodConfig
from madcluster.method.head import build_head
from madcluster.persistence import read_model_file, write_model_file
from madcluster.training import PRECISIONS, MADClusterNet, TrainSettings, train_network

logger = logging.getLogger(__name__)

CUSTOM_EMBEDDER = "<custom module>"

# Named configurations (see MADCluster.from_preset). "default" is the constructor's defaults.
PRESETS: dict[str, dict[str, Any]] = {
    "default": {},
    "paper": {
        "drnn_params": {"auxiliary": "none", "bias": True},  # the D-RNN's defaults, pinned
        "score_scaling": "raw",
        "roughness_window": 0,
        "center_warmup": 0,
        "early_stopping": "loss",
    },
}
SCORE_COMBINATIONS = ("standardized", "raw")
# The D-RNN's roughness channels (README method table: synthetic suite .862 -> .930, MSL per entity
# VUS-PR .335 -> .363; w = 5 and 10 were measured too).
DEFAULT_ROUGHNESS_WINDOW = 3
# At most 20 epochs (early stopping usually ends sooner). README method table: synthetic suite
# .930 -> .940, higher on every base; MSL flat (per entity VUS-PR .363 -> .367, concatenated .158 ->
# .161, 3 seeds); training up to 2x longer.
DEFAULT_EPOCHS = 20
SCALINGS = ("standard", "minmax")


class MADCluster(BaseDetector):
    """MADCluster (Lee et al.): a Base Embedder trained with Cluster Distance Mapping and
    Sequence-wise Clustering; anomaly score per time step (paper Eq. 7).

    Parameters
    ----------
    embedder : registered name (``"drnn"``) or your own ``nn.Module`` mapping ``[B, L, D]`` to
        ``h [B, L, f]`` (or a :class:`~madcluster.embedders.BaseEmbedder`).
    embedder_params : keyword arguments of the registered embedder, e.g. ``{"hidden_size": 64}``.
    window_size : window length L (paper: 100).
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
        (AVX-512 BF16, AMX) and GPUs. About 2.5x faster for the Anomaly Transformer on this
        project's CPU (``benchmarks/results/peer_speed.md``); weights, the head, the losses it
        sums and every score stay float32.
    roughness_window : w > 0 appends, per channel, the log of the mean squared first difference
        over the trailing w steps (``madcluster.data.features.roughness``) to what the embedder
        sees; 0 (the paper) feeds the scaled input only. Default (None): 3 for the D-RNN, 0 for
        every other embedder, so the base models see their published input. See the README's
        method table.
    """

    def __init__(
        self,
        embedder: str | nn.Module = "drnn",
        embedder_params: dict | None = None,
        window_size: int = 100,
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
        """A detector with a named configuration; ``params`` override it.

        ``"default"`` is the library default (what was measured to detect, see the README's method
        table); ``"paper"`` is the paper's formulation exactly (``DESIGN.md``): no auxiliary loss on
        the D-RNN, Eq. 7's raw sum, non-overlapping scoring windows, early stopping on the total loss.
        """
        if preset not in PRESETS:
            raise ValueError(f"unknown preset {preset!r}; choose one of {', '.join(PRESETS)}")
        values = dict(PRESETS[preset])
        embedder = params.get("embedder", "drnn")
        drnn_params = values.pop("drnn_params", None)
        if drnn_params and embedder == "drnn":
            values["embedder_params"] = {**drnn_params, **(params.pop("embedder_params", None) or {})}
        if preset == "paper" and "score_stride" not in params:
            values["score_stride"] = params.get("window_size", 100)
        values.update(params)
        return cls(**values)

    # ------------------------------------------------------------------ configuration helpers
    def method_config(self) -> MethodConfig:
        """The objective options as a validated :class:`MethodConfig`."""
        return MethodConfig(**{name: getattr(self, name) for name in MethodConfig.field_names() if name != "eps"})

    def _validate_params(self) -> None:
        self.method_config()
        for name in ("window_size", "stride", "epochs", "batch_size", "patience"):
            check_positive_int(name, getattr(self, name))
        if self.score_stride is not None and (not isinstance(self.score_stride, (int, np.integer)) or self.score_stride < 1):
            raise ValueError(f"score_stride must be a positive integer or None, got {self.score_stride!r}")
        if not isinstance(self.pretrain_epochs, (int, np.integer)) or not 0 <= self.pretrain_epochs < self.epochs:
            raise ValueError(f"pretrain_epochs must be an integer in [0, epochs), got {self.pretrain_epochs!r}")
        if not 0.0 <= self.validation_size < 1.0:
            raise ValueError(f"validation_size must be in [0, 1), got {self.validation_size}")
        if self.lr <= 0 or self.weight_decay < 0:
            raise ValueError("lr must be > 0 and weight_decay >= 0")
        if self.base_score_combination not in SCORE_COMBINATIONS:
            raise ValueError(f"unknown base_score_combination {self.base_score_combination!r}; choose one of {', '.join(SCORE_COMBINATIONS)}")
        if self.scaling not in SCALINGS:
            raise ValueError(f"unknown scaling {self.scaling!r}; choose one of {', '.join(SCALINGS)}")
        window = self.roughness_window
        if window is not None and (not isinstance(window, (int, np.integer)) or window < 0):
            raise ValueError(f"roughness_window must be an integer >= 0 (0: off) or None, got {window!r}")
        if self.precision not in PRECISIONS:
            raise ValueError(f"unknown precision {self.precision!r}; choose one of {', '.join(PRECISIONS)}")

    def _resolve_device(self) -> torch.device:
        return check_device(self.device)  # one-line DeviceError for e.g. cuda on CPU-only torch

    def _build_embedder(self, n_features: int) -> BaseEmbedder:
        if isinstance(self.embedder, str):
            return build_embedder(self.embedder, n_features, window_size=self.window_size, **(self.embedder_params or {}))
        if isinstance(self.embedder, BaseEmbedder):
            return copy.deepcopy(self.embedder)
        if isinstance(self.embedder, nn.Module):
            module = copy.deepcopy(self.embedder)
            return ModuleEmbedder(module, out_features=self._probe_features(module, n_features))
        raise ValueError(f"embedder must be a registered name or a torch.nn.Module, got {type(self.embedder).__name__}")

    def _probe_features(self, module: nn.Module, n_features: int) -> int:
        """Run a tiny batch through a user's module to check its output shape and read f."""
        x = torch.zeros(2, self.window_size, n_features)
        try:
            with torch.no_grad():
                out = module(x)
        except Exception as exc:  # noqa: BLE001 - a user's module can fail in any way; say where
            raise ValueError(f"the embedder module failed on a batch of shape {tuple(x.shape)} [B, L, D]: {exc}") from None
        h = getattr(out, "h", out)
        if not isinstance(h, torch.Tensor) or h.dim() != 3 or tuple(h.shape[:2]) != (2, self.window_size):
            shape = tuple(h.shape) if isinstance(h, torch.Tensor) else type(h).__name__
            raise ValueError(f"the embedder module must return h of shape [B, L, f] = [2, {self.window_size}, f] for input {tuple(x.shape)}; got {shape}")
        return int(h.shape[-1])

    # ------------------------------------------------------------------ fit / score
    def fit(self, X: Any, y: Any = None, *, validation_data: Any = None, pool_radius: bool = False) -> MADCluster:
        """Train on ``X`` (T, D), mostly normal data; ``y`` is ignored (unsupervised).

        ``validation_data`` (T', D) replaces the end-of-train split for early stopping and the best
        checkpoint (all of ``X`` is then trained on); ``pool_radius=True`` also takes R from the
        training and validation windows pooled. Both exist only to reproduce the released code,
        which passes the TEST set here (a leak); the default never sees anything but ``X``.
        """
        self._validate_params()
        data = check_series(X, min_length=self.window_size, name="X")
        self.n_features_in_ = data.shape[1]
        self._record_feature_names(X)
        if pool_radius and validation_data is None:
            raise ValueError("pool_radius=True needs validation_data")
        self.scaler_mean_, self.scaler_scale_ = self._fit_scaler(data)
        self.roughness_window_ = self._resolve_roughness()
        if self.roughness_window_:  # the roughness channels, from the scaled input, get their own
            rough = roughness(self._scale_input(data), self.roughness_window_)
            mean, scale = self._fit_scaler(rough)
            self.scaler_mean_ = np.concatenate([self.scaler_mean_, mean])
            self.scaler_scale_ = np.concatenate([self.scaler_scale_, scale])
        scaled = self._model_input(data)
        extra_val = None
        if validation_data is not None:
            extra_val = self._model_input(check_series(
                self._align_feature_names(validation_data), min_length=self.window_size,
                n_features=self.n_features_in_, name="validation_data",
            ))

        n_val = 0 if extra_val is not None else int(len(scaled) * self.validation_size)
        if n_val and (n_val < self.window_size or len(scaled) - n_val < self.window_size):
            logger.warning("series too short for a %s validation split of windows of %d; early stopping disabled", self.validation_size, self.window_size)
            n_val = 0
        device = self._resolve_device()
        self.device_ = str(device)
        with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
            if self.random_state is not None:
                torch.manual_seed(self.random_state)
            generator = torch.Generator().manual_seed(self.random_state if self.random_state is not None else int(torch.seed() % 2**63))
            embedder = self._build_embedder(self._model_width())
            head = build_head(embedder.out_features, self.method_config())
            self.net_ = MADClusterNet(embedder, head, PRECISIONS[self.precision]).to(device)
            series = torch.from_numpy(scaled).to(device)
            train_part = series[: len(series) - n_val]
            val_part = series[len(series) - n_val :] if n_val else None
            if extra_val is not None:
                val_part = torch.from_numpy(extra_val).to(device)
            settings = TrainSettings(
                window_size=self.window_size, stride=self.stride, epochs=self.epochs, batch_size=self.batch_size,
                lr=self.lr, weight_decay=self.weight_decay, patience=self.patience,
                early_stopping=self.early_stopping, pretrain_epochs=self.pretrain_epochs, progress=bool(self.verbose),
            )
            path: list[np.ndarray] = []
            self.history_ = train_network(
                self.net_, train_part, val_part, settings, generator,
                observe_epoch=lambda epoch, net: path.extend(_head_centers(net.head)),
                radius_extra=val_part if pool_radius else None,
            )
        # c after epoch pretrain_epochs + i (row 0: its initial value); None for base-only
        self.center_path_ = np.stack(path) if path else None

        terms = self._score_terms(scaled)
        self.score_stats_ = {name: _mean_std(values) for name, values in terms.items()}
        head_terms = [name for name in terms if name != "base"]
        if head_terms:
            self.score_stats_["own"] = _mean_std(self._head_score(terms))
        self._set_training_scores(self._combine(terms))
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        """Anomaly score per row of ``X`` (T,), higher = more anomalous; exactly one per time step."""
        self._check_fitted()
        X = self._align_feature_names(X)
        data = check_series(X, min_length=self.window_size, n_features=self.n_features_in_, name="X")
        return self._combine(self._score_terms(self._model_input(data)))

    def explain(self, X: Any) -> np.ndarray:
        """Per-channel contributions to the score, ``(T, D)``: how much of ``decision_function(X)[t]``
        goes away when channel j is held at its training mean (occlusion; why and what it costs:
        :mod:`madcluster.attribution`). Large positive values name the channels behind an alert."""
        from madcluster.attribution import channel_groups, occlusion_contributions

        self._check_fitted()
        X = self._align_feature_names(X)
        data = check_series(X, min_length=self.window_size, n_features=self.n_features_in_, name="X")
        inputs = self._model_input(data)
        groups = channel_groups(self.n_features_in_, inputs.shape[1])
        return occlusion_contributions(lambda m: self._combine(self._score_terms(m)), inputs, groups)

    def embed(self, X: Any) -> np.ndarray:
        """The Base Embedder's features h, one vector per row of ``X``: ``(T, f)``.

        Windows and the window-to-point mapping are exactly those of :meth:`decision_function`, so
        ``embed(X)[t]`` is the h behind the score of step t (the paper's figures plot these).
        """
        self._check_fitted()
        X = self._align_feature_names(X)
        data = check_series(X, min_length=self.window_size, n_features=self.n_features_in_, name="X")
        net = self.net_.eval()
        device = next(net.parameters()).device
        series = torch.from_numpy(self._model_input(data)).to(device)
        starts = window_starts(len(series), self.window_size, self._effective_score_stride())
        chunks = []
        with torch.no_grad():
            for i in range(0, len(starts), 4 * self.batch_size):
                x = gather_windows(series, starts[i : i + 4 * self.batch_size], self.window_size)
                chunks.append(net(x).h.float().cpu().numpy())
        h = np.concatenate(chunks)
        if net.embedder.causal:
            return windows_to_points_with_history(h, starts, len(series))
        return np.stack([windows_to_points(h[..., j], starts, len(series)) for j in range(h.shape[-1])], axis=1)

    def _fit_scaler(self, data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per-channel offset and scale of ``scaling`` (a constant channel keeps scale 1)."""
        if self.scaling == "minmax":
            offset = data.min(axis=0).astype(np.float64)
            scale = data.max(axis=0).astype(np.float64) - offset
        else:
            offset = data.mean(axis=0, dtype=np.float64)
            scale = data.std(axis=0, dtype=np.float64)
        return offset, np.where(scale > 1e-8, scale, 1.0)

    def _scale_input(self, data: np.ndarray) -> np.ndarray:
        d = self.n_features_in_
        return (data - self.scaler_mean_[:d]) / self.scaler_scale_[:d]

    def _model_input(self, data: np.ndarray) -> np.ndarray:
        """What the network sees: the scaled input and, with ``roughness_window``, its scaled
        roughness channels (``madcluster.data.features``), float32 ``(T, model width)``."""
        scaled = self._scale_input(data)
        if self.roughness_window_:
            d = self.n_features_in_
            rough = roughness(scaled, self.roughness_window_)
            scaled = np.concatenate([scaled, (rough - self.scaler_mean_[d:]) / self.scaler_scale_[d:]], axis=1)
        return scaled.astype(np.float32)

    def _resolve_roughness(self) -> int:
        """``roughness_window``, with None resolved: 3 for the D-RNN, 0 for any other embedder."""
        if self.roughness_window is not None:
            return int(self.roughness_window)
        return DEFAULT_ROUGHNESS_WINDOW if self.embedder == "drnn" else 0

    def _model_width(self) -> int:
        """Input channels of the network: D, or 2D with the roughness channels."""
        return len(self.scaler_mean_)

    def _effective_score_stride(self) -> int:
        if self.score_stride is not None:
            return int(self.score_stride)
        return max(1, self.window_size // 10) if self.net_.embedder.causal else self.window_size

    @torch.no_grad()
    def _score_terms(self, scaled: np.ndarray) -> dict[str, np.ndarray]:
        """Per-point score terms (the head's and the base model's) for a scaled series."""
        net = self.net_.eval()
        device = next(net.parameters()).device
        series = torch.from_numpy(scaled).to(device)
        starts = window_starts(len(series), self.window_size, self._effective_score_stride())
        parts: dict[str, list[np.ndarray]] = {}
        for i in range(0, len(starts), 4 * self.batch_size):
            x = gather_windows(series, starts[i : i + 4 * self.batch_size], self.window_size)
            for name, values in net.score(x).items():
                parts.setdefault(name, []).append(values.float().cpu().numpy())
        to_points = windows_to_points_with_history if net.embedder.causal else windows_to_points
        return {name: to_points(np.concatenate(chunks), starts, len(series)) for name, chunks in parts.items()}

    def _head_score(self, terms: dict[str, np.ndarray]) -> np.ndarray:
        """MADCluster's own score: Eq. 7's sum (``raw``) or the sum of standardised terms."""
        names = [name for name in terms if name != "base"]
        if self.score_scaling == "standardized":
            return sum(_standardize(terms[n], self.score_stats_[n]) for n in names)
        return sum(terms[n] for n in names)

    def _combine(self, terms: dict[str, np.ndarray]) -> np.ndarray:
        base = terms.get("base")
        if len(terms) == (base is not None):  # no head terms: the base model alone
            if base is None:
                raise DataError("the model produced no score terms")
            scores = base
        else:
            own = self._head_score(terms)
            if base is None:
                scores = own
            elif self.base_score_combination == "raw":
                scores = own + base
            else:
                scores = _standardize(own, self.score_stats_["own"]) + _standardize(base, self.score_stats_["base"])
        if not np.all(np.isfinite(scores)):
            raise DataError("the model produced non-finite scores: the input may be far outside the training range")
        return np.asarray(scores, dtype=np.float64)

    def cost(self, window_size: int | None = None) -> dict[str, Any]:
        """Parameters and MACs of scoring one window (batch 1), as the paper's compute table."""
        from madcluster.compute import torch_model_cost

        self._check_fitted()
        return torch_model_cost(self.net_, window_size or self.window_size, self._model_width())

    # ------------------------------------------------------------------ persistence
    def save(self, path: str | os.PathLike) -> None:
        """Write the fitted detector to ``path`` (zip of JSON config + npz weights), atomically."""
        self._check_fitted()
        params = self.get_params()
        if not isinstance(params["embedder"], str):
            params["embedder"] = CUSTOM_EMBEDDER
        config = {
            "params": params,
            "fitted": {
                "n_features_in_": self.n_features_in_,
                "feature_names_in_": _names_list(self),
                "threshold_": self.threshold_,
                "score_stats_": self.score_stats_,
                "history_": self.history_,
                "n_hidden": self.net_.embedder.out_features,
            },
        }
        arrays = {f"state/{k}": v.detach().cpu().numpy() for k, v in self.net_.state_dict().items()}
        arrays.update(scaler_mean=self.scaler_mean_, scaler_scale=self.scaler_scale_, decision_scores=self.decision_scores_)
        if getattr(self, "center_path_", None) is not None:
            arrays["center_path"] = self.center_path_
        write_model_file(path, config, arrays)

    @classmethod
    def load(cls, path: str | os.PathLike, *, embedder: nn.Module | None = None, device: str = "cpu") -> MADCluster:
        """Load a detector written by :meth:`save`. Models with a custom embedder need that module
        (freshly constructed, same architecture) passed as ``embedder``."""
        config, arrays = read_model_file(path)
        try:
            params = dict(config["params"])
            fitted = config["fitted"]
            if params["embedder"] == CUSTOM_EMBEDDER:
                if embedder is None:
                    raise ModelFileError(f"{os.fspath(path)!r} was trained with a custom embedder module: pass the same architecture as MADCluster.load(path, embedder=MyModule(...))")
                params["embedder"] = embedder
            params["device"] = device
            params.setdefault("roughness_window", 0)  # files written before the option existed
            model = cls(**params)
            model.roughness_window_ = model._resolve_roughness()
            model.n_features_in_ = int(fitted["n_features_in_"])
            if fitted.get("feature_names_in_") is not None:  # absent in older model files
                model.feature_names_in_ = np.asarray(fitted["feature_names_in_"], dtype=object)
            model.scaler_mean_ = arrays["scaler_mean"]
            model.scaler_scale_ = arrays["scaler_scale"]
            model.score_stats_ = {k: tuple(v) for k, v in fitted["score_stats_"].items()}
            model.history_ = fitted["history_"]
            model.center_path_ = arrays.get("center_path")  # absent in older model files
            base = model._build_embedder(model._model_width())
            head = build_head(int(fitted["n_hidden"]), model.method_config())
            net = MADClusterNet(base, head, PRECISIONS[params.get("precision", "float32")])
            state = {k[len("state/"):]: torch.from_numpy(v) for k, v in arrays.items() if k.startswith("state/")}
            net.load_state_dict(state, strict=True)
            model.net_ = net.to(model._resolve_device()).eval()
            model.device_ = str(model._resolve_device())
            model.decision_scores_ = arrays["decision_scores"].astype(np.float64)
            model.threshold_ = float(fitted["threshold_"])
            model.labels_ = (model.decision_scores_ > model.threshold_).astype(np.int64)
        except ModelFileError:
            raise
        except (KeyError, TypeError, ValueError, RuntimeError) as exc:
            raise ModelFileError(f"{os.fspath(path)!r} does not match this madcluster version or its embedder: {exc}") from None
        return model


def _head_centers(head: nn.Module) -> list[np.ndarray]:
    """The head's current center(s) as a copy, ``[f]`` (k = 1) or ``[k, f]``; none without a head."""
    center = getattr(head, "center", getattr(head, "centers", None))
    return [] if center is None else [center.detach().cpu().numpy().astype(np.float64).copy()]


def _standardize(values: np.ndarray, stats: tuple[float, float]) -> np.ndarray:
    mean, std = stats
    return (values - mean) / std


def _mean_std(values: np.ndarray) -> tuple[float, float]:
    std = float(values.std())
    return float(values.mean()), std if std > 1e-12 else 1.0


def _names_list(detector: BaseDetector) -> list[str] | None:
    """``feature_names_in_`` as a JSON list for the model file (None when fitted on an array)."""
    names = getattr(detector, "feature_names_in_", None)
    return None if names is None else [str(n) for n in names]
