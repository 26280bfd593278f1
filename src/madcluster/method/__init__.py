"""The paper's method: objective options, loss terms and the heads."""

from madcluster.method.config import MethodConfig
from madcluster.method.head import Head, LossParts, MADClusterHead, NoHead
from madcluster.method.heads import build_head

__all__ = ["Head", "LossParts", "MADClusterHead", "MethodConfig", "NoHead", "build_head"]
