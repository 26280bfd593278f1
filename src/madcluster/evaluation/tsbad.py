"""TSB-AD's protocol (Liu & Paparrizos, NeurIPS 2024) as a named evaluation: ``"tsb-ad"``.

For one series (a :class:`Dataset` from :mod:`madcluster.data.tsbad`: ``train`` = its first N
points, ``test`` = all of it): fit the detector on the first N points, score the **whole** series
(its training part included, as TSB-AD's semi-supervised runner does), and report TSB-AD's VUS-PR
and VUS-ROC with its window rule ``find_length_rank(series[:, 0], rank=1)``
(:func:`madcluster.metrics.tsbad.tsbad_vus`). Detectors are built from a configuration so that
every series gets a fresh, seeded model.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from madcluster.base import BaseDetector
from madcluster.baselines import KMeansDetector, PCADetector
from madcluster.data.train_test import Dataset
from madcluster.estimator.detector import MADCluster
from madcluster.evaluation.ensemble import build_ensemble
from madcluster.exceptions import DataError
from madcluster.metrics.tsbad import find_length_rank, tsbad_vus
from madcluster.presets import PRESETS

PROTOCOL = "tsb-ad"
BASELINES = {"pca": PCADetector, "kmeans": KMeansDetector}


@dataclass(frozen=True)
class SeriesResult:
    """One detector on one series under TSB-AD's protocol."""

    series: str
    vus_pr: float
    vus_roc: float
    window: int
    fit_seconds: float
    score_seconds: float
    epochs: int | None  # epochs trained (MADCluster only)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def build_detector(config: dict[str, Any], seed: int) -> BaseDetector:
    """A fresh detector from a configuration.

    ``config`` holds MADCluster keyword arguments, optionally ``"preset"`` (a name of
    :data:`madcluster.presets.PRESETS`, default ``"default"``), or ``"detector": "pca" | "kmeans"``
    with that baseline's keyword arguments, or ``"detector": "ensemble", "members": [config, ...]``
    (:class:`madcluster.evaluation.ensemble.StandardizedSum`). ``random_state`` defaults to
    ``seed``.
    """
    params = dict(config)
    kind = params.pop("detector", "madcluster")
    if kind == "ensemble":
        members = params.pop("members", None)
        if not members or params:
            raise DataError(
                f"an ensemble is {{'detector': 'ensemble', 'members': [config, ...]}}, got {config}"
            )
        return build_ensemble(members, lambda member: build_detector(member, seed))
    params.setdefault("random_state", seed)
    if kind in BASELINES:
        if "preset" in params:
            raise DataError(f"'preset' applies to MADCluster only, not to the {kind} baseline")
        return _construct(BASELINES[kind], params)
    if kind != "madcluster":
        raise DataError(f"unknown detector {kind!r}: use 'madcluster', {', '.join(BASELINES)}")
    preset = params.pop("preset", "default")
    if preset not in PRESETS:
        raise DataError(f"unknown preset {preset!r}; choose one of {', '.join(PRESETS)}")
    return _construct(lambda **p: MADCluster.from_preset(preset, **p), params)


def _construct(factory: Any, params: dict[str, Any]) -> BaseDetector:
    try:
        return factory(**params)
    except TypeError as exc:  # an unknown keyword: name it instead of a traceback
        raise DataError(f"bad configuration {params}: {exc}") from None


def evaluate_series(config: dict[str, Any], series: Dataset, seed: int = 0) -> SeriesResult:
    """Fit on ``series.train``, score ``series.test``, TSB-AD's VUS with its window rule."""
    if len(series.test) < len(series.train) or not np.array_equal(
        series.test[: len(series.train)], series.train
    ):
        raise DataError(
            f"{series.name}: under TSB-AD's protocol the training points are the series' first N "
            "points (read it with madcluster.data.tsbad)"
        )
    detector = build_detector(config, seed)
    start = time.perf_counter()
    detector.fit(series.train)
    fitted = time.perf_counter()
    scores = detector.decision_function(series.test)
    scored = time.perf_counter()
    roc, pr = tsbad_vus(scores, series.labels, series.test)
    history = getattr(detector, "history_", None)
    epochs = len(history.get("epoch", [])) if isinstance(history, dict) else None
    return SeriesResult(
        series=series.name,
        vus_pr=pr,
        vus_roc=roc,
        window=find_length_rank(series.test[:, 0]),
        fit_seconds=fitted - start,
        score_seconds=scored - fitted,
        epochs=epochs,
    )


__all__ = ["BASELINES", "PROTOCOL", "SeriesResult", "build_detector", "evaluate_series"]
