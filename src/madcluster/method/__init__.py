"""The paper's method: objective options, loss terms and the MADCluster head module."""

from madcluster.method.config import MethodConfig
from madcluster.method.head import LossParts, MADClusterHead

__all__ = ["LossParts", "MADClusterHead", "MethodConfig"]
