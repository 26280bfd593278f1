"""Scoring throughput with history-aware overlapping windows vs non-overlapping windows.

    python benchmarks/studies/speed/bench_scoring.py            # one torch thread, MSL-sized input (73,729 x 55)

Both rows score the same fitted D-RNN in the same process; the ratio is what the window-period
fix costs. Training cost per epoch is unchanged by it (scoring only), so one epoch is timed once.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import torch

from madcluster import MADCluster


def main() -> None:
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    t = np.arange(73_729)[:, None]
    x = (np.sin(t / 20.0 + np.arange(55)) + 0.1 * rng.normal(size=(len(t), 55))).astype(np.float32)
    model = MADCluster(epochs=1, stride=50, random_state=0, validation_size=0.0).fit(x[:20_000])
    print(f"one epoch (stride 50, 20,000 steps): {model.history_['seconds'][0]:.1f} s")
    rows = []
    for stride in (100, 10):
        model.model_ = dataclasses.replace(model.model_, score_stride=stride)  # the same network, scored at this stride
        model.decision_function(x[:5000])  # warm-up
        t0 = time.perf_counter()
        model.decision_function(x)
        seconds = time.perf_counter() - t0
        rows.append((stride, seconds, len(x) / seconds))
    print("| score_stride | seconds | points/s |")
    print("|---|---|---|")
    for stride, seconds, pps in rows:
        print(f"| {stride} | {seconds:.2f} | {pps:,.0f} |")
    print(f"ratio (stride 100 / stride 10 throughput): {rows[0][2] / rows[1][2]:.1f}x")


if __name__ == "__main__":
    main()
