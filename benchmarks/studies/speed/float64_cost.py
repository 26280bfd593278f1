"""What scoring in float64 costs (issue 29 goal 1): the same measurements with two source trees,
this one and a checkout from before (float32 scoring), in alternating subprocesses, one thread.

Per tree and round: a 3-epoch ``--preset streaming`` fit of the demo series (wall seconds; its
last step, the training scores, is where float64 enters the fit), batch ``decision_function`` of
the 5,000 test rows (median of 3, ms) and a 400-row one-row-at-a-time stream after a 200-row start
(per-row ms, p50 / p99, wall and thread CPU). Medians over the rounds, and after / before ratios.
Writes ``benchmarks/results/float64_cost.json``::

    git worktree add --detach /tmp/base-ops2 ebab9c9      # main before float64 scoring
    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/studies/speed/float64_cost.py --before-src /tmp/base-ops2/src
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve()
WORKER = """
import json, time
import numpy as np, torch
from madcluster import MADCluster
from madcluster.data.synthetic import make_demo_data
torch.set_num_threads(1)
demo = make_demo_data()
start = time.perf_counter()
model = MADCluster.from_preset("streaming", epochs=3, random_state=0).fit(demo.train)
fit_s = time.perf_counter() - start
batch = []
for _ in range(3):
    start = time.perf_counter(); scores = model.decision_function(demo.test); batch.append(time.perf_counter() - start)
series = demo.test[:600]
scorer = model.stream()
scorer.update(series[:200])
wall, cpu = [], []
for row in series[200:]:
    s, c = time.perf_counter(), time.thread_time()
    scorer.update(row[None, :])
    wall.append(time.perf_counter() - s); cpu.append(time.thread_time() - c)
wall, cpu = np.asarray(wall) * 1e3, np.asarray(cpu) * 1e3
print(json.dumps({"fit_3_epochs_s": fit_s, "decision_function_5000_rows_ms": 1e3 * float(np.median(batch)),
                  "stream_p50_ms": float(np.percentile(wall, 50)), "stream_p99_ms": float(np.percentile(wall, 99)),
                  "stream_cpu_p50_ms": float(np.percentile(cpu, 50)), "stream_cpu_p99_ms": float(np.percentile(cpu, 99))}))
"""


def run(src: str) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": src, "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-c", WORKER], env=env, capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before-src", required=True, help="src/ of a checkout with float32 scoring")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default="benchmarks/results/float64_cost.json")
    args = parser.parse_args()
    trees = {"before (float32 scoring)": args.before_src, "after (float64 scoring)": str(HERE.parents[3] / "src")}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for _ in range(args.rounds):
        for name, src in trees.items():
            runs[name].append(run(src))
            print(name, runs[name][-1], flush=True)
    medians = {name: {k: round(float(np.median([r[k] for r in rs])), 3) for k in rs[0]} for name, rs in runs.items()}
    before, after = medians.values()
    summary = {
        "command": "PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/studies/speed/float64_cost.py --before-src /tmp/base-ops2/src "
                   "(/tmp/base-ops2: git worktree of ebab9c9, main before this branch)",
        "rounds": args.rounds, "medians": medians,
        "after_over_before": {k: round(after[k] / before[k], 2) for k in before},
        "runs": runs,
    }
    print(json.dumps({k: summary[k] for k in ("medians", "after_over_before")}, indent=2))
    Path(args.out).write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
