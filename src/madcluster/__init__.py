"""madcluster: MADCluster for unsupervised multivariate time-series anomaly detection."""

from madcluster.detector import MADCluster
from madcluster.exceptions import DataError, MADClusterError, ModelFileError

__version__ = "0.1.0"

__all__ = ["MADCluster", "DataError", "MADClusterError", "ModelFileError", "__version__"]
