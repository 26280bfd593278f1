"""Per-row latency of streaming scores (issue 20 part 2; goal: p99 < 5 ms for the default model).

Fits on the demo series (8 channels), then feeds a fresh 400-row stretch to ``detector.stream()``
one row at a time on one torch thread, timing each ``update``. The reference in the same process:
``decision_function`` on the same rows, per row (batch scoring's amortised cost). Wall-clock
latency and the CPU time of the scoring thread (``time.thread_time``: what a row costs when the
machine is shared) are both reported. Writes
``benchmarks/results/stream_latency.json``::

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/stream_latency.py
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np
import torch

from madcluster import MADCluster
from madcluster.atomic import atomic_write_text
from madcluster.data.synthetic import make_demo_data

MODELS = {"default": {}, "deepsvdd": {"embedder": "deepsvdd"}}


def measure(name: str, params: dict, rows: int, epochs: int) -> dict:
    demo = make_demo_data(n_train=3000, n_test=rows + 200, seed=7)
    model = MADCluster(random_state=0, epochs=epochs, **params).fit(demo.train)
    series = demo.test[: rows + 200]
    scorer = model.stream()
    scorer.update(series[:200])  # past the warm-up, as a long-running stream
    latencies, cpu = [], []
    for row in series[200:]:
        start, start_cpu = time.perf_counter(), time.thread_time()
        scorer.update(row[None, :])
        latencies.append(time.perf_counter() - start)
        cpu.append(time.thread_time() - start_cpu)
    ms, cpu_ms = np.asarray(latencies) * 1e3, np.asarray(cpu) * 1e3
    start = time.perf_counter()
    model.decision_function(series)
    batch_per_row = (time.perf_counter() - start) / len(series) * 1e3
    return {
        "model": name, "window_size": model.window_size, "n_features": series.shape[1], "rows": rows,
        "p50_ms": round(float(np.percentile(ms, 50)), 3), "p99_ms": round(float(np.percentile(ms, 99)), 3),
        "mean_ms": round(float(ms.mean()), 3), "max_ms": round(float(ms.max()), 3),
        "cpu_p50_ms": round(float(np.percentile(cpu_ms, 50)), 3), "cpu_p99_ms": round(float(np.percentile(cpu_ms, 99)), 3),
        "batch_decision_function_ms_per_row": round(batch_per_row, 3),
        "stream_over_batch_per_row": round(float(ms.mean()) / batch_per_row, 1),
        "buffered_rows": scorer.buffered_rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=400)
    parser.add_argument("--epochs", type=int, default=1, help="training epochs (latency does not depend on them)")
    parser.add_argument("--out", default="benchmarks/results/stream_latency.json")
    args = parser.parse_args()
    torch.set_num_threads(1)
    results = [measure(name, params, args.rows, args.epochs) for name, params in MODELS.items()]
    for result in results:
        print(json.dumps(result))
    payload = {
        "command": "PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/stream_latency.py",
        "machine": {"cpu_count": os.cpu_count(), "load_avg_1min": round(os.getloadavg()[0], 2),
                    "python": platform.python_version(), "torch": torch.__version__, "threads": 1},
        "results": results,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.out, json.dumps(payload, indent=2) + "\n")


if __name__ == "__main__":
    main()
