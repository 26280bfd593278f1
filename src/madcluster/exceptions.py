"""Errors raised by madcluster.

Every user-facing problem is a ``ValueError`` subclass whose message names the problem and what to
do about it, so callers can catch ``ValueError`` and never see a traceback from deep inside torch.
"""

from __future__ import annotations


class MADClusterError(ValueError):
    """Base class of every error madcluster raises on bad input."""


class DataError(MADClusterError):
    """The input series is unusable: NaN/inf, wrong shape, too short, non-numeric columns."""


class ModelFileError(MADClusterError):
    """A model file is missing, truncated, corrupt or from an incompatible version."""


class NotFittedError(MADClusterError, AttributeError):
    """The detector was used before ``fit``."""


class DatasetNotFoundError(MADClusterError, FileNotFoundError):
    """A benchmark dataset's files are not in the data directory."""
