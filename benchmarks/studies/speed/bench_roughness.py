"""What the roughness channels (the default D-RNN input) cost: training epoch and scoring, with and without.

    python benchmarks/studies/speed/bench_roughness.py          # one torch thread, MSL-sized input (55 channels)

Both detectors are built, trained and scored in the same process, alternating, ``--repeats``
times (medians), so the ratio holds on a shared machine. Training: one epoch over 20,000 steps at
stride 10 (no validation split). Scoring: the 73,729-step series at the default score stride.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch

from madcluster import MADCluster


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    t = np.arange(73_729)[:, None]
    x = (np.sin(t / 20.0 + np.arange(55)) + 0.1 * rng.normal(size=(len(t), 55))).astype(np.float32)
    epoch: dict[int, list[float]] = {0: [], 3: []}
    score: dict[int, list[float]] = {0: [], 3: []}
    for _ in range(args.repeats):
        for window in (0, 3):
            model = MADCluster(epochs=1, stride=10, random_state=0, validation_size=0.0,
                               roughness_window=window).fit(x[:20_000])
            epoch[window].append(model.history_["seconds"][0])
            started = time.perf_counter()
            model.decision_function(x)
            score[window].append(time.perf_counter() - started)
    print("| roughness_window | epoch s (20,000 steps, stride 10) | scoring s (73,729 steps) | points/s |")
    print("|---|---|---|---|")
    for window in (0, 3):
        e, s = statistics.median(epoch[window]), statistics.median(score[window])
        print(f"| {window} | {e:.2f} | {s:.2f} | {len(x) / s:,.0f} |")
    ratio_e = statistics.median(epoch[3]) / statistics.median(epoch[0])
    ratio_s = statistics.median(score[3]) / statistics.median(score[0])
    print(f"cost of the roughness channels: epoch x{ratio_e:.2f}, scoring x{ratio_s:.2f} (medians of {args.repeats})")


if __name__ == "__main__":
    main()
