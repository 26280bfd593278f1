"""Shared fixtures: small deterministic series that train in a second or two."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import torch
from series_helpers import make_series

# Small models gain nothing from intra-op threads, and OpenMP threads that spin while another process
# holds a core slow GRU training down by an order of magnitude; one thread keeps the suite predictable.
torch.set_num_threads(1)


@pytest.fixture
def series() -> np.ndarray:
    return make_series()


@pytest.fixture
def small_params() -> dict:
    """Detector settings that keep a fit around a second on 2 CPU cores."""
    return {"window_size": 20, "stride": 4, "epochs": 2, "batch_size": 32, "embedder_params": {"hidden_size": 16, "n_layers": 2}, "random_state": 0}


_SESSION: list[pytest.Session] = []


def pytest_sessionfinish(session: pytest.Session) -> None:
    _SESSION[:] = [session]


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """In CI, leave with the session's exit status once pytest has reported, skipping the
    interpreter's teardown.

    Why: CI once ended with a segmentation fault (exit 139) after "1313 passed" was printed, in the
    teardown of the native libraries this suite loads into one process (Ray leaves about eight of its
    C++ threads running after ``ray.shutdown()``; torch and onnxruntime tear down beside them). Failed
    tests still fail: the status is pytest's own. ``.ci/run`` sets PYTHONFAULTHANDLER, so a crash
    before this point still prints where it happened.
    """
    if not os.environ.get("CI") or not _SESSION:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(int(_SESSION[0].exitstatus))
