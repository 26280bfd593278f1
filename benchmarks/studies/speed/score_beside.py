"""Scoring cost of the default beside another checkout's (issue 36: "scoring 20,000 x 6 rows and one
streamed row no slower than today").

    git worktree add /tmp/old bb28e52
    PYTHONPATH=src python benchmarks/studies/speed/score_beside.py --beside /tmp/old/src --rounds 3

Each round runs, in a subprocess per checkout (alternating which goes first, one torch thread):
the default fitted for one epoch on the synthetic suite's ``seasonal`` base (20,000 x 6; the cost
of scoring does not depend on how long the network trained), then the CPU seconds of
``decision_function`` on its 10,000 test rows and on the 20,000 training rows, and a stream fed
400 rows one at a time after a 1,000-row start (CPU ms per row, ``time.thread_time``: p50 and p99).
Prints one JSON line per run and the ratios of the medians (this / beside).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def measure() -> dict:
    import numpy as np
    import torch

    from madcluster import MADCluster
    from madcluster.data.synthetic import make_anomaly_suite

    torch.set_num_threads(1)
    data = make_anomaly_suite("seasonal", n_train=20_000, n_test=10_000, seed=0)
    model = MADCluster(random_state=0, epochs=1).fit(data.train)
    model.decision_function(data.test[:2_000])  # warm-up
    out = {}
    for name, rows in (("score_test_10k_cpu_s", data.test), ("score_train_20k_cpu_s", data.train)):
        start = time.process_time()
        model.decision_function(rows)
        out[name] = round(time.process_time() - start, 3)
    scorer = model.stream()
    scorer.update(data.test[:1_000])
    cpu = []
    for row in data.test[1_000:1_400]:
        start = time.thread_time()
        scorer.update(row[None, :])
        cpu.append(time.thread_time() - start)
    ms = np.asarray(cpu) * 1e3
    out["stream_row_cpu_p50_ms"] = round(float(np.percentile(ms, 50)), 3)
    out["stream_row_cpu_p99_ms"] = round(float(np.percentile(ms, 99)), 3)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--beside", metavar="SRC", help="another checkout's src/ (e.g. bb28e52's)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child or not args.beside:
        print(json.dumps(measure()), flush=True)
        return
    here = str(Path(__file__).resolve().parents[3] / "src")
    runs: dict[str, list[dict]] = {"this": [], "beside": []}
    for round_ in range(args.rounds):
        order = [("this", here), ("beside", args.beside)]
        for name, src in order if round_ % 2 == 0 else order[::-1]:
            env = {**os.environ, "PYTHONPATH": src, "OMP_NUM_THREADS": "1"}
            done = subprocess.run([sys.executable, __file__, "--child"], env=env,
                                  capture_output=True, text=True, check=True)
            line = json.loads(done.stdout.strip().splitlines()[-1])
            runs[name].append(line)
            print(json.dumps({"checkout": name, "src": src, "round": round_, **line}), flush=True)
    ratios = {
        key: round(statistics.median(r[key] for r in runs["this"])
                   / statistics.median(r[key] for r in runs["beside"]), 3)
        for key in runs["this"][0]
    }
    print(json.dumps({"ratio_this_over_beside": ratios}), flush=True)


if __name__ == "__main__":
    main()
