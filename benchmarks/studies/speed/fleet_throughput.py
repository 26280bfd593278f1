"""Fleet throughput (issue 36 item 6): entities per core-minute of ``fit_fleet`` on a folder of small
entities (5,000 x 8 rows each, the issue's 200-entity fleet), for this checkout's code and, beside
it in the same run, another checkout's (``--old-src``, e.g. a ``git worktree`` of bb28e52).

    python benchmarks/studies/speed/fleet_throughput.py --entities 6 --old-src /tmp/old/src
    python benchmarks/studies/speed/fleet_throughput.py --entities 200 --executor ray --threads 1   # the whole fleet

The entities are the synthetic suite's ``seasonal`` base (server-metric-like, 8 channels) with
seeds 0..N-1, written as ``.npy`` files into a temporary folder (so the same folder is fitted by
every checkout). Each checkout runs ``madcluster.fleet.fit_fleet`` with its default parameters in a
subprocess of its own (one torch thread per model; ``--executor sequential`` by default, which on
one core is what Ray does per CPU without Ray's start-up), and the benchmark reports its CPU seconds
(the subprocess's user + system time: the core-time the fleet cost, whatever else the machine
ran) and wall seconds; entities per core-minute = entities / (CPU seconds / 60). The order of the
checkouts alternates over ``--rounds``. One JSON line per (checkout, round).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[3]

CHILD = r"""
import json, sys, time
from madcluster.fleet import fit_fleet
started = time.perf_counter()
result = fit_fleet(sys.argv[1], sys.argv[2], params=json.loads(sys.argv[3]), executor=sys.argv[4], threads=1, progress=False)
assert result.ok, result.failures
epochs = [d.get("epochs_run") for d in result.details.values()]
print(json.dumps({"wall_seconds": time.perf_counter() - started, "entities": len(result.outputs), "epochs_run": epochs}))
"""


def write_entities(folder: Path, n: int, rows: int, channels: int) -> None:
    from madcluster.data.synthetic import make_anomaly_suite

    for seed in range(n):
        data = make_anomaly_suite("seasonal", n_train=rows, n_test=4000, n_channels=channels, seed=seed)
        np.save(folder / f"entity{seed:03d}.npy", data.train.astype(np.float32))


def run_fleet(src: str, data: Path, params: dict, executor: str) -> dict:
    env = {**os.environ, "PYTHONPATH": src, "OMP_NUM_THREADS": "1"}
    with tempfile.TemporaryDirectory() as out:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run([sys.executable, "-c", CHILD, str(data), out, json.dumps(params), executor],
                              env=env, capture_output=True, text=True, check=False)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"fleet run with {src} failed:\n{done.stderr[-3000:]}")
    line = json.loads(done.stdout.strip().splitlines()[-1])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {**line, "cpu_seconds": round(cpu, 1), "wall_seconds": round(line["wall_seconds"], 1),
            "entities_per_core_minute": round(line["entities"] / (cpu / 60.0), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entities", type=int, default=6)
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--channels", type=int, default=8)
    parser.add_argument("--old-src", default=None, help="another checkout's src/ to run beside this one")
    parser.add_argument("--executor", default="sequential", choices=("sequential", "ray"))
    parser.add_argument("--params", default="{}", help="detector parameters (JSON) of this checkout")
    parser.add_argument("--old-params", default="{}", help="detector parameters (JSON) of --old-src's")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    checkouts = {"this": str(REPO / "src")}
    if args.old_src:
        checkouts["old"] = args.old_src
    params = {"this": json.loads(args.params), "old": json.loads(args.old_params)}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "fleet"
        data.mkdir()
        write_entities(data, args.entities, args.rows, args.channels)
        for round_ in range(args.rounds):
            names = list(checkouts) if round_ % 2 == 0 else list(reversed(checkouts))
            for name in names:
                started = time.strftime("%H:%M:%S")
                result = run_fleet(checkouts[name], data, params[name], args.executor)
                print(json.dumps({"checkout": name, "src": checkouts[name], "params": params[name], "round": round_, "started": started,
                                  "executor": args.executor, "shape": [args.entities, args.rows, args.channels], **result}),
                      flush=True)


if __name__ == "__main__":
    main()
