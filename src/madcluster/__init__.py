"""madcluster: MADCluster for unsupervised multivariate time-series anomaly detection.

Public API: the detector, the baselines, dataset loading and the metrics entry point. They are
imported on first use (module ``__getattr__``), so ``import madcluster`` and the command line's
``--help`` do not pay for torch and scikit-learn (seconds) until a model is built.
"""

from __future__ import annotations

from madcluster.exceptions import (
    DataError,
    DatasetNotFoundError,
    DeviceError,
    FarFromTrainingWarning,
    MADClusterError,
    ModelFileError,
    OutputPathError,
    ParameterError,
)
from madcluster.lazy import lazy_exports

__version__ = "0.1.0"

#: Public name -> module that defines it, imported when the name is first used.
_LAZY = {
    "KMeansDetector": "madcluster.baselines",
    "PCADetector": "madcluster.baselines",
    "MADCluster": "madcluster.estimator.detector",
    "StreamScorer": "madcluster.estimator.streaming",
    "OnnxScorer": "madcluster.estimator.onnx_scorer",
    "load_dataset": "madcluster.data.datasets",
    "evaluate": "madcluster.metrics",
    "NotFittedError": "madcluster.exceptions",
}


__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)

__all__ = [
    "DataError",
    "DatasetNotFoundError",
    "DeviceError",
    "FarFromTrainingWarning",
    "KMeansDetector",
    "MADCluster",
    "MADClusterError",
    "ModelFileError",
    "NotFittedError",
    "OnnxScorer",
    "OutputPathError",
    "PCADetector",
    "ParameterError",
    "StreamScorer",
    "__version__",
    "evaluate",
    "load_dataset",
]
