"""The image detector: ``fit`` on normal images, a score per image, an anomaly map per pixel.

Same estimator API and the same machinery as the time-series :class:`~madcluster.MADCluster`: an
image Base Embedder (``madcluster.embedders.IMAGE_EMBEDDERS``) under the same head
(``build_head``), trained by the same loop (``train_network``, which draws whole images instead of
windows through :class:`~madcluster.images.inputs.ImageBatches`), saved in the same model-file
format.

Scores. Per image, the base model's map gives its image score (the map's maximum) and its pixel
map; each MADCluster term (Eq. 7: cluster term, d - R^2) gives an image score (its mean over the
sequence in the ``channels`` layout, its maximum in the ``pixels`` layout) and, in the ``pixels``
layout only, a map (upsampled to the image). As for time series, MADCluster's score is the sum of
its standardised terms (``score_scaling``) and the final score the sum of the standardised base and
MADCluster scores (``base_score_combination``), statistics taken on the training images, the
MADCluster one weighted by ``head_weight`` (1 for time series).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import torch
from torch.nn import functional as F

from madcluster.base import BaseDetector
from madcluster.data.validation import check_device
from madcluster.defaults import Param, defaults, fraction, is_number, positive_int
from madcluster.embedders import build_image_embedder
from madcluster.embedders.image_base import LAYOUTS
from madcluster.estimator.params import MADCLUSTER_PARAMS
from madcluster.estimator.persistence import read_model_file, write_model_file
from madcluster.exceptions import DataError, ModelFileError
from madcluster.images.inputs import ImageBatches, check_images, training_batch_size
from madcluster.method.config import MethodConfig
from madcluster.method.heads import build_head
from madcluster.score.scoring import combine_scores, score_statistics
from madcluster.training.loop import TrainSettings, train_network
from madcluster.training.network import MADClusterNet

KIND = "image"
METHOD_OPTIONS = (
    "mode",
    "rho",
    "tau",
    "center_init",
    "nu_param",
    "distance_loss",
    "cluster_target",
    "score_scaling",
    "center_warmup",
    "n_clusters",
)
_SERIES = MADCLUSTER_PARAMS
#: ImageMADCluster's parameters: its own defaults where images need others (a teacher-student
#: base model, 256 px, 10 epochs), the series detector's table for the rest.
IMAGE_PARAMS: dict[str, Param] = {
    "embedder": Param("rd4ad"),  # the image registry names the known ones
    "embedder_params": _SERIES["embedder_params"],
    "image_size": positive_int(256),
    "layout": Param("pixels", LAYOUTS),
    "detach_h": Param(False),
    "epochs": positive_int(10),
    "batch_size": positive_int(16),
    "lr": _SERIES["lr"],
    "weight_decay": _SERIES["weight_decay"],
    "validation_size": fraction(0.0),
    "patience": _SERIES["patience"],
    **{name: _SERIES[name] for name in METHOD_OPTIONS[:-1]},
    "n_clusters": _SERIES["n_clusters"],
    "base_score_combination": _SERIES["base_score_combination"],
    "head_weight": Param(0.5, lambda v: is_number(v) and v > 0, "a finite number > 0"),
    "contamination": _SERIES["contamination"],
    "random_state": _SERIES["random_state"],
    "device": _SERIES["device"],
    "verbose": _SERIES["verbose"],
}
_D = defaults(IMAGE_PARAMS)


class ImageMADCluster(BaseDetector):
    """MADCluster on an image anomaly detector (paper appendix "Extension to Image Data Domains").

    Parameters
    ----------
    embedder : registered image embedder, ``"rd4ad"`` or ``"pyramidflow"``.
    embedder_params : its keyword arguments (e.g. ``{"backbone": "resnet18", "weights":
        "wrn.pth"}``).
    image_size : images are resized to ``image_size x image_size``.
    layout : ``pixels`` (default: [B, H W, C], one h per position; MADCluster then also adds a pixel
        map) or ``channels`` (the paper's literal [B, C, H W], one h per channel). See
        ``docs/images.md``.
    detach_h : False (the paper): MADCluster's loss trains the base model too; True: its gradient
        stops at h, so the base model trains exactly as alone and the head learns on its features.
    epochs : training epochs (the paper: 10), no early stopping unless ``validation_size`` > 0.
    validation_size : fraction of the training images held out for early stopping (0: none).
    mode, rho, tau, center_init, nu_param, distance_loss, cluster_target, score_scaling,
    center_warmup, n_clusters : the MADCluster objective, as :class:`~madcluster.MADCluster`
        (``mode="base-only"``: the base model alone).
    base_score_combination, contamination, random_state, device, verbose : as MADCluster.
    head_weight : weight of MADCluster's standardised score (and map) in the sum with the base
        model's standardised score (and map); 1 is the time-series rule (and the ``paper``
        configuration).

    The defaults (``pixels``, joint training, ``head_weight=0.5``) are the + MADCluster option that
    scored best on CutPaste defects pasted into held-out training images
    (``benchmarks/results/image/selection-pooled.md``); ``layout="channels", head_weight=1`` is the
    paper's literal reading. Each parameter's default and allowed values: :data:`IMAGE_PARAMS`.
    """

    _parameters = IMAGE_PARAMS

    def __init__(
        self,
        embedder: str = _D["embedder"],
        embedder_params: dict | None = _D["embedder_params"],
        image_size: int = _D["image_size"],
        layout: str = _D["layout"],
        detach_h: bool = _D["detach_h"],
        epochs: int = _D["epochs"],
        batch_size: int = _D["batch_size"],
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
        score_scaling: str = _D["score_scaling"],
        center_warmup: int = _D["center_warmup"],
        n_clusters: int = _D["n_clusters"],
        base_score_combination: str = _D["base_score_combination"],
        head_weight: float = _D["head_weight"],
        contamination: float = _D["contamination"],
        random_state: int | None = _D["random_state"],
        device: str = _D["device"],
        verbose: bool = _D["verbose"],
    ) -> None:
        self.embedder = embedder
        self.embedder_params = embedder_params
        self.image_size = image_size
        self.layout = layout
        self.detach_h = detach_h
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
        self.score_scaling = score_scaling
        self.center_warmup = center_warmup
        self.n_clusters = n_clusters
        self.base_score_combination = base_score_combination
        self.head_weight = head_weight
        self.contamination = contamination
        self.random_state = random_state
        self.device = device
        self.verbose = verbose

    def method_config(self) -> MethodConfig:
        return MethodConfig(**{name: getattr(self, name) for name in METHOD_OPTIONS})

    def _validate_params(self) -> None:
        """The objective's options (MethodConfig), then the rest against :data:`IMAGE_PARAMS`."""
        self.method_config()
        super()._validate_params()

    def _build_net(self, n_channels: int) -> MADClusterNet:
        params = {
            **(self.embedder_params or {}),
            "layout": self.layout,
            "detach_h": bool(self.detach_h),
        }
        embedder = build_image_embedder(self.embedder, n_channels, self.image_size, **params)
        return MADClusterNet(embedder, build_head(embedder.out_features, self.method_config()))

    # ------------------------------------------------------------------ fit / score
    def fit(self, X: Any, y: Any = None) -> ImageMADCluster:
        """Train on normal images ``X`` (array ``[N, C, H, W]`` or a folder); ``y`` is ignored."""
        self._validate_params()
        images = check_images(X, image_size=self.image_size)
        self.n_channels_ = images.shape[1]
        n_val = int(len(images) * self.validation_size)
        if len(images) - n_val < 2:
            raise DataError(f"need at least 2 training images, got {len(images) - n_val}")
        device = check_device(self.device)
        self.device_ = str(device)
        with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
            seed = self.random_state if self.random_state is not None else int(torch.seed() % 2**63)
            torch.manual_seed(seed)
            generator = torch.Generator().manual_seed(seed)
            self.net_ = self._build_net(self.n_channels_).to(device)
            data = torch.from_numpy(images).to(device)
            settings = TrainSettings(
                window_size=1,
                epochs=self.epochs,
                batch_size=training_batch_size(len(data) - n_val, self.batch_size),
                lr=self.lr,
                weight_decay=self.weight_decay,
                patience=self.patience,
                progress=bool(self.verbose),
                description=f"{self.embedder} ({self.mode})",
                sampler=ImageBatches(),
            )
            train = data[: len(data) - n_val]
            self.history_ = train_network(
                self.net_, train, data[len(data) - n_val :] if n_val else None, settings, generator
            )
        scores, maps = self.score_terms(images)
        self.score_stats_ = score_statistics(scores, self.score_scaling)
        self.map_stats_ = score_statistics(maps, self.score_scaling)
        self._set_training_scores(self._combine(scores, self.score_stats_))
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        """One anomaly score per image, higher = more anomalous."""
        return self.decision_and_map(X)[0]

    def anomaly_map(self, X: Any) -> np.ndarray:
        """One anomaly map per image, ``[N, image_size, image_size]``, higher = more anomalous."""
        return self.decision_and_map(X)[1]

    def decision_and_map(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """Both :meth:`decision_function` and :meth:`anomaly_map` from one pass over ``X``."""
        self._check_fitted()
        images = check_images(X, image_size=self.image_size, n_channels=self.n_channels_)
        scores, maps = self.score_terms(images)
        return self._combine(scores, self.score_stats_), self._combine(maps, self.map_stats_)

    @torch.no_grad()
    def score_terms(
        self, images: np.ndarray
    ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """Named per-image scores ``(N,)`` and named maps ``(N, H, W)``: ``base`` and the head's
        terms."""
        net = self.net_.eval()
        embedder = net.embedder
        device = next(net.parameters()).device
        size = (self.image_size, self.image_size)
        scores: dict[str, list[np.ndarray]] = {}
        maps: dict[str, list[np.ndarray]] = {}
        for i in range(0, len(images), self.batch_size):
            x = torch.from_numpy(images[i : i + self.batch_size]).to(device)
            out = net(x)
            base_map = out.score.reshape(len(x), *size)
            scores.setdefault("base", []).append(base_map.flatten(1).amax(1).cpu().numpy())
            maps.setdefault("base", []).append(base_map.cpu().numpy())
            for name, terms in net.head.score_terms(out.h).items():
                spatial = embedder.head_map(terms)
                if spatial is None:
                    scores.setdefault(name, []).append(terms.mean(1).cpu().numpy())
                    continue
                scores.setdefault(name, []).append(terms.amax(1).cpu().numpy())
                up = F.interpolate(
                    spatial[:, None], size=size, mode="bilinear", align_corners=False
                )[:, 0]
                maps.setdefault(name, []).append(up.cpu().numpy())
        return _concatenated(scores), _concatenated(maps)

    def _combine(
        self, terms: dict[str, np.ndarray], stats: dict[str, tuple[float, float]]
    ) -> np.ndarray:
        """Scores or maps from their named terms, exactly as the time-series detector combines
        them."""
        return combine_scores(
            terms, stats, self.score_scaling, self.base_score_combination, self.head_weight
        )

    # ------------------------------------------------------------------ persistence
    def save(self, path: str | os.PathLike) -> None:
        """Write the fitted detector to ``path`` (the model-file format of MADCluster),
        atomically."""
        self._check_fitted()
        config = {
            "kind": KIND,
            "params": self.get_params(),
            "fitted": {
                "n_channels_": self.n_channels_,
                "threshold_": self.threshold_,
                "history_": self.history_,
                "score_stats_": self.score_stats_,
                "map_stats_": self.map_stats_,
            },
        }
        arrays = {f"state/{k}": v.detach().cpu().numpy() for k, v in self.net_.state_dict().items()}
        arrays["decision_scores"] = self.decision_scores_
        write_model_file(path, config, arrays)

    @classmethod
    def load(cls, path: str | os.PathLike, *, device: str = "cpu") -> ImageMADCluster:
        """Load a detector written by :meth:`save`."""
        config, arrays = read_model_file(path)
        if config.get("kind") != KIND:
            raise ModelFileError(
                f"{os.fspath(path)!r} is not an image model: load it with MADCluster.load"
            )
        try:
            fitted = config["fitted"]
            model = cls(**{**config["params"], "device": device})
            model.n_channels_ = int(fitted["n_channels_"])
            net = model._build_net(model.n_channels_)
            state = {
                k[len("state/") :]: torch.from_numpy(v)
                for k, v in arrays.items()
                if k.startswith("state/")
            }
            net.load_state_dict(state, strict=True)
            model.net_ = net.to(check_device(device)).eval()
            model.device_ = device
            model.history_ = fitted["history_"]
            model.score_stats_ = {k: tuple(v) for k, v in fitted["score_stats_"].items()}
            model.map_stats_ = {k: tuple(v) for k, v in fitted["map_stats_"].items()}
            model.decision_scores_ = arrays["decision_scores"].astype(np.float64)
            model.threshold_ = float(fitted["threshold_"])
            model.labels_ = (model.decision_scores_ > model.threshold_).astype(np.int64)
        except (KeyError, TypeError, ValueError, RuntimeError) as exc:
            raise ModelFileError(
                f"{os.fspath(path)!r} does not match this madcluster version: {exc}"
            ) from None
        return model


def _concatenated(parts: dict[str, list[np.ndarray]]) -> dict[str, np.ndarray]:
    return {name: np.concatenate(chunks).astype(np.float64) for name, chunks in parts.items()}
