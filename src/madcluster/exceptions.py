"""Errors raised by madcluster.

Every user-facing problem is a ``ValueError`` subclass whose message names the problem and what to
do about it, so callers can catch ``ValueError`` and never see a traceback from deep inside torch.
"""

from __future__ import annotations

from typing import Any


class MADClusterError(ValueError):
    """Base class of every error madcluster raises on bad input."""


class ParameterError(MADClusterError):
    """A parameter is out of range or unknown: ``epochs=-1``, ``embedder="nope"``,
    ``contamination=2``, ``predict_proba(method="bogus")``. Also a ``ValueError``, so code written
    as ``except ValueError`` keeps working."""


class DataError(MADClusterError):
    """The input series is unusable: NaN/inf, wrong shape, too short, non-numeric columns."""


class ModelFileError(MADClusterError):
    """A model file is missing, truncated, corrupt or from an incompatible version."""


class DatasetNotFoundError(MADClusterError, FileNotFoundError):
    """A benchmark dataset's files are not in the data directory."""


class OutputPathError(MADClusterError):
    """An output path cannot be written: a directory, a read-only place, or the input itself.

    Raised before any work starts where possible (``madcluster fit`` checks ``-o`` before training).
    """


class DeviceError(MADClusterError):
    """The requested torch device does not exist or is not available in this torch build."""


class StreamError(MADClusterError):
    """A stream cannot be opened, fed or restored: a non-causal model, a state file of another
    model, a corrupt state file."""


class ThresholdError(MADClusterError):
    """The training scores cannot support the chosen threshold (e.g. POT with too few peaks)."""


class FarFromTrainingWarning(UserWarning):
    """Scored rows sit far outside the training range in some columns, on most rows: the message
    names each column, on how many rows and how far (in training deviations, or training ranges
    with ``scaling="minmax"``). The scores there say the data moved more than where anomalies are.
    Filter it with ``warnings.filterwarnings("ignore", category=FarFromTrainingWarning)``."""


def _not_fitted_error() -> type:
    """``NotFittedError``, built on first use: importing scikit-learn costs seconds, and only a
    fitted-model check needs it (``import madcluster`` and ``madcluster --help`` must not)."""
    from sklearn.exceptions import NotFittedError as SklearnNotFittedError

    class NotFittedError(MADClusterError, SklearnNotFittedError):
        """The detector was used before ``fit``.

        Also scikit-learn's ``NotFittedError`` (itself a ``ValueError`` and ``AttributeError``), so
        code written for scikit-learn / PyOD estimators catches it unchanged.
        """

    NotFittedError.__module__ = __name__
    NotFittedError.__qualname__ = "NotFittedError"
    return NotFittedError


def __getattr__(name: str) -> Any:
    if name == "NotFittedError":
        cls = _not_fitted_error()
        globals()[name] = cls  # built once: every import sees the same class
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
