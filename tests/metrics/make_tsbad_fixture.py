"""Write ``data/tsbad_fixture.npz``: TSB-AD 1.5's window rule and VUS on fixed inputs.

How it was made (the package is never a project dependency):

    python3 -m venv /work/sidevenv/tsbad
    /work/sidevenv/tsbad/bin/pip install --no-deps tsb-ad==1.5 hurst
    /work/sidevenv/tsbad/bin/pip install "numpy<2" pandas scikit-learn scipy statsmodels torch==2.13.0
    /work/sidevenv/tsbad/bin/python tests/metrics/make_tsbad_fixture.py

For each case it stores the inputs (a first channel, scores, labels) and what the package returns:
``find_length_rank(channel.reshape(-1, 1), rank=1)`` (as TSB-AD's runners call it) and
``get_metrics(scores, labels, slidingWindow=window)['VUS-PR' / 'VUS-ROC']``. The cases cover
periodic channels (several periods, trends, noise), aperiodic ones (the 125 fallback), a constant
one, tied and binary scores, anomalies at both ends and touching extensions.
``tests/metrics/test_tsbad_metrics.py`` compares madcluster's functions with these values.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent / "data" / "tsbad_fixture.npz"


def _channel(rng: np.random.Generator, kind: int, n: int) -> np.ndarray:
    t = np.arange(n)
    if kind == 0:  # clean period 50
        return np.sin(2 * np.pi * t / 50) + 0.1 * rng.normal(size=n)
    if kind == 1:  # period 24 plus a trend
        return np.sin(2 * np.pi * t / 24) + t / n + 0.3 * rng.normal(size=n)
    if kind == 2:  # white noise (no period: usually 125)
        return rng.normal(size=n)
    if kind == 3:  # random walk
        return np.cumsum(rng.normal(size=n))
    if kind == 4:  # constant
        return np.full(n, 3.0)
    if kind == 5:  # two periods, the longer stronger
        return 2 * np.sin(2 * np.pi * t / 180) + np.sin(2 * np.pi * t / 15) + 0.2 * rng.normal(size=n)
    return np.sign(np.sin(2 * np.pi * t / 97)) + 0.05 * rng.normal(size=n)  # square wave


def _labels(rng: np.random.Generator, n: int, case: int) -> np.ndarray:
    y = np.zeros(n, dtype=np.int64)
    if case % 3 == 0:  # anomalies at both ends and a pair with touching extensions
        y[:7] = 1
        y[n - 12 :] = 1
        y[n // 2 : n // 2 + 20] = 1
        y[n // 2 + 60 : n // 2 + 65] = 1
    else:
        for _ in range(1 + case % 4):
            s = int(rng.integers(0, n - 80))
            y[s : s + int(rng.integers(1, 80))] = 1
    return y


def _scores(rng: np.random.Generator, y: np.ndarray, case: int) -> np.ndarray:
    n = y.size
    signal = np.convolve(y, np.ones(15) / 15, mode="same")  # a little before and after the anomaly
    s = signal * (0.5 + case / 10) + rng.normal(scale=0.4, size=n)
    if case % 4 == 1:
        s = np.round(s, 1)  # many ties
    if case % 4 == 2:
        s = (s > np.quantile(s, 0.95)).astype(float)  # binary predictions
    return s


def main() -> None:
    from TSB_AD.evaluation.metrics import get_metrics
    from TSB_AD.utils.slidingWindows import find_length_rank

    rng = np.random.default_rng(20241119)
    arrays: dict[str, np.ndarray] = {}
    lengths = [1500, 2300, 900, 3100, 1200, 2600, 1800, 700, 20_500, 4000, 1000, 2048]
    windows, vus_pr, vus_roc = [], [], []
    for case, n in enumerate(lengths):
        channel = _channel(rng, case % 7, n).astype(np.float32)  # the datasets' precision
        y = _labels(rng, n, case)
        s = _scores(rng, y, case).astype(np.float32).astype(np.float64)
        window = int(find_length_rank(channel.astype(np.float64).reshape(-1, 1), rank=1))
        m = get_metrics(s, y, slidingWindow=window)
        arrays[f"channel_{case}"] = channel
        arrays[f"labels_{case}"] = y.astype(np.uint8)
        arrays[f"scores_{case}"] = s.astype(np.float32)  # exact: s was rounded to float32
        windows.append(window)
        vus_pr.append(m["VUS-PR"])
        vus_roc.append(m["VUS-ROC"])
        print(f"case {case}: n={n} window={window} VUS-PR={m['VUS-PR']:.6f} VUS-ROC={m['VUS-ROC']:.6f}")
    arrays["window"] = np.array(windows)
    arrays["vus_pr"] = np.array(vus_pr)
    arrays["vus_roc"] = np.array(vus_roc)
    arrays["tsb_ad_version"] = np.array(importlib.metadata.version("TSB_AD"))
    OUT.parent.mkdir(exist_ok=True)
    np.savez_compressed(OUT, **arrays)
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
