"""madcluster: MADCluster for unsupervised multivariate time-series anomaly detection.

Public API: the detector, the baselines, dataset loading and the metrics entry point.
"""

from madcluster.baselines import KMeansDetector, PCADetector
from madcluster.data.datasets import load_dataset
from madcluster.detector import MADCluster
from madcluster.exceptions import (
    DataError,
    DatasetNotFoundError,
    DeviceError,
    MADClusterError,
    ModelFileError,
    NotFittedError,
    OutputPathError,
)
from madcluster.metrics import evaluate

__version__ = "0.1.0"

__all__ = [
    "DataError",
    "DatasetNotFoundError",
    "DeviceError",
    "KMeansDetector",
    "MADCluster",
    "MADClusterError",
    "ModelFileError",
    "NotFittedError",
    "OutputPathError",
    "PCADetector",
    "__version__",
    "evaluate",
    "load_dataset",
]
