"""Two tiny fitted detectors on one series: the same D-RNN alone and with MADCluster."""

from __future__ import annotations

import numpy as np
import pytest

from madcluster import MADCluster

PARAMS = {
    "window_size": 20, "stride": 4, "epochs": 3, "batch_size": 32, "validation_size": 0.0,
    "embedder_params": {"hidden_size": 8, "n_layers": 2, "auxiliary": "next-step"},
    "random_state": 0, "device": "cpu",
}


@pytest.fixture(scope="package")
def params() -> dict:
    return dict(PARAMS)


@pytest.fixture(scope="package")
def data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Train series, test series with two injected anomalies, and the test labels."""
    rng = np.random.default_rng(0)
    t = np.arange(700)
    clean = np.stack([np.sin(t / 7), np.cos(t / 11), 0.5 * np.sin(t / 3)], axis=1)
    series = (clean + 0.05 * rng.normal(size=clean.shape)).astype(np.float32)
    train, test = series[:400], series[400:].copy()
    labels = np.zeros(len(test), dtype=np.int64)
    for start, end in ((80, 100), (200, 215)):
        test[start:end, 1] += 3.0
        labels[start:end] = 1
    return train, test, labels


@pytest.fixture(scope="package")
def full_model(data) -> MADCluster:
    return MADCluster(**PARAMS).fit(data[0])


@pytest.fixture(scope="package")
def base_model(data) -> MADCluster:
    return MADCluster(mode="base-only", **PARAMS).fit(data[0])
