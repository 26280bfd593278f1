"""One way from a parameters dict to a detector: the command line, the benchmark and fleets use it.

``params`` are constructor arguments plus two keys of their own: ``detector`` (``madcluster``, the
default, or a window baseline ``pca`` / ``kmeans``) and ``preset`` (MADCluster only; see
:mod:`madcluster.presets`). Defaults live in the constructors' signatures, never here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from madcluster.base import BaseDetector
from madcluster.exceptions import ParameterError


def make_detector(params: Mapping[str, Any]) -> BaseDetector:
    """The detector ``params`` describe (missing parameters take the constructor's defaults)."""
    from madcluster.baselines import KMeansDetector, PCADetector
    from madcluster.estimator.detector import MADCluster

    params = dict(params)
    kind = str(params.pop("detector", "madcluster")).lower()
    preset = params.pop("preset", "default")
    baselines = {"pca": PCADetector, "kmeans": KMeansDetector}
    if kind in baselines:
        if preset != "default":
            raise ParameterError(f"preset {preset!r} is MADCluster's; the {kind} baseline has none")
        return baselines[kind](**params)
    if kind != "madcluster":
        raise ParameterError(
            f"unknown detector {kind!r}; choose one of madcluster, {', '.join(baselines)}"
        )
    return MADCluster.from_preset(preset, **params)
