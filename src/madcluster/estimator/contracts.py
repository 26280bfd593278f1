"""What the estimator's satellites read of a fitted :class:`~madcluster.estimator.detector.MADCluster`.

Streaming, ONNX export, model files and the network fit are written against these protocols, not
against the class, so none of them imports ``detector.py`` (not even for type hints) and the
estimator's modules form no import cycle. Each protocol lists exactly what its users touch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np
    import torch

    from madcluster.embedders.drnn_steps import DilatedRNNSteps
    from madcluster.training.loop import MADClusterNet


class TrainableDetector(Protocol):
    """The parameters the network fit reads and the attributes it sets (``device_``, ``net_``,
    ``history_``, ``center_path_``)."""

    device: str
    device_: str
    random_state: int | None
    validation_size: float
    window_size: int
    verbose: int | bool
    net_: MADClusterNet
    history_: dict[str, Any]
    center_path_: np.ndarray | None


class FittedDetector(Protocol):
    """A fitted detector as streaming, export and model files see it."""

    window_size: int
    n_jobs: int | None
    embedder: Any
    input_terms: Any
    n_features_in_: int
    threshold_: float
    net_: MADClusterNet
    scaler_mean_: np.ndarray
    scaler_scale_: np.ndarray
    roughness_window_: int
    decision_scores_: np.ndarray
    score_stats_: dict[str, Any]
    history_: dict[str, Any]
    constant_columns_: np.ndarray
    center_path_: np.ndarray | None
    warmup_quantiles_: np.ndarray | None
    attribution_baseline_: np.ndarray | None
    input_terms_: list[Any]

    def get_params(self, deep: bool = True) -> dict[str, Any]: ...
    def stream(self) -> Any: ...
    def row_stepper(self) -> DilatedRNNSteps | None: ...
    def validate_rows(self, X: Any, min_length: int | None = None, name: str = "X") -> np.ndarray: ...
    def bound_constant_columns(self, rows: np.ndarray, previous_row: np.ndarray | None = None) -> np.ndarray: ...
    def score_with_history(self, rows: np.ndarray, first_step: int = 0, score_from: int | None = None) -> np.ndarray: ...
    def history_start(self, step: int) -> int: ...
    def model_input(self, rows: np.ndarray) -> np.ndarray: ...
    def score_features(self, h: torch.Tensor, steps: np.ndarray) -> np.ndarray: ...
    def model_windows(self, X: Any) -> tuple[np.ndarray, np.ndarray]: ...
    def combine_terms(self, terms: dict[str, Any]) -> Any: ...
