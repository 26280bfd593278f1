"""Fit time of the default detector on a 20,000 x 6 series on one thread (issue 20's budget: 60 s).

    python benchmarks/fit_budget.py                       # today's default, full fit
    python benchmarks/fit_budget.py --set epochs=2        # e.g. the old loop's seconds per epoch
    python benchmarks/fit_budget.py --beside /tmp/old/src --rounds 3   # and another checkout's code, alternating

The series is the synthetic suite's ``seasonal`` base (six channels sharing a daily-like season, a
slow cycle and AR noise, like server metrics) at 20,000 training and 10,000 test rows, seed 0, with
two anomalies of each of the suite's seven kinds in the test part. Prints one JSON line: fit
seconds (wall, and the process's CPU seconds: on one thread the wall time of an idle core, which
a shared machine's wall clock is not), epochs run, seconds per epoch and the test ROC-AUC.

``--beside SRC`` runs this measurement in subprocesses, this checkout's ``src`` and ``SRC`` (e.g. a
``git worktree add /tmp/old bb28e52``), alternating for ``--rounds``, and then prints the ratio of
the median CPU seconds (this / beside): both measured in the same run, on the same machine load.
``--also KEY=VALUE ...`` adds a third fit per round, this checkout with those overrides.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch
from benchlib import parse_overrides

from madcluster import MADCluster
from madcluster.data.synthetic import make_anomaly_suite, roc_auc_by_kind


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE", help="override a MADCluster parameter")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--beside", metavar="SRC", help="also run another checkout's src/, alternating")
    parser.add_argument("--rounds", type=int, default=3, help="with --beside: fits of each checkout")
    parser.add_argument("--also", nargs="*", default=[], metavar="KEY=VALUE",
                        help="with --beside: also fit this checkout with these overrides, each round")
    args = parser.parse_args()
    if args.beside:
        return beside(args)
    torch.set_num_threads(1)
    overrides = parse_overrides(args.set)
    data = make_anomaly_suite("seasonal", n_train=20_000, n_test=10_000, seed=args.seed)
    model = MADCluster(random_state=args.seed, **overrides)
    started, cpu_started = time.perf_counter(), time.process_time()
    model.fit(data.train)
    fit_seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
    aucs = roc_auc_by_kind(model.decision_function(data.test), data.kinds, data.kind_names)
    epoch_seconds = model.history_["seconds"]
    print(json.dumps({
        "overrides": overrides, "seed": args.seed, "shape": list(data.train.shape), "threads": torch.get_num_threads(),
        "fit_seconds": round(fit_seconds, 1), "fit_cpu_seconds": round(cpu_seconds, 1), "epochs_run": len(epoch_seconds),
        "epoch_seconds_median": round(float(np.median(epoch_seconds)), 2),
        "roc_auc": {k: round(v, 4) for k, v in aucs.items()},
    }), flush=True)


def beside(args: argparse.Namespace) -> None:
    """This checkout and ``args.beside`` in alternating subprocesses; the CPU-seconds ratio."""
    here = str(Path(__file__).resolve().parents[1] / "src")
    runs: dict[str, list[dict]] = {"this": [], "beside": [], "this, also": []}
    for round_ in range(args.rounds):
        order = [("this", here, args.set), ("beside", args.beside, args.set)]
        order = order if round_ % 2 == 0 else order[::-1]
        if args.also:
            order.append(("this, also", here, [*args.set, *args.also]))
        for name, src, overrides in order:
            env = {**os.environ, "PYTHONPATH": src, "OMP_NUM_THREADS": "1"}
            command = [sys.executable, __file__, "--seed", str(args.seed), "--set", *overrides]
            done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
            line = json.loads(done.stdout.strip().splitlines()[-1])
            runs[name].append(line)
            print(json.dumps({"checkout": name, "src": src, "round": round_, **line}), flush=True)
    medians = {k: float(np.median([r["fit_cpu_seconds"] for r in v])) for k, v in runs.items() if v}
    ratios = {k: round(v / medians["beside"], 3) for k, v in medians.items() if k != "beside"}
    print(json.dumps({"median_fit_cpu_seconds": medians, "ratio_to_beside": ratios}), flush=True)


if __name__ == "__main__":
    main()
