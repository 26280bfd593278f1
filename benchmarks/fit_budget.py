"""Fit time of the default detector on a 20,000 x 6 series on one thread (issue 20's budget: 60 s).

    python benchmarks/fit_budget.py                       # today's default, full fit
    python benchmarks/fit_budget.py --set epochs=2        # e.g. the old loop's seconds per epoch

The series is the synthetic suite's ``seasonal`` base (six channels sharing a daily-like season, a
slow cycle and AR noise, like server metrics) at 20,000 training and 10,000 test rows, seed 0, with
two anomalies of each of the suite's seven kinds in the test part. Prints one JSON line: fit
seconds (wall, and the process's CPU seconds: on one thread the wall time of an idle core, which
a shared machine's wall clock is not), epochs run, seconds per epoch and the test ROC-AUC.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

from madcluster import MADCluster
from madcluster.data.synthetic import make_anomaly_suite, roc_auc_by_kind


def parse_value(text: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE", help="override a MADCluster parameter")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    overrides = {k: parse_value(v) for k, v in (item.split("=", 1) for item in args.set)}
    data = make_anomaly_suite("seasonal", n_train=20_000, n_test=10_000, seed=args.seed)
    model = MADCluster(random_state=args.seed, **overrides)
    started, cpu_started = time.perf_counter(), time.process_time()
    model.fit(data.train)
    fit_seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
    aucs = roc_auc_by_kind(model.decision_function(data.test), data.kinds, data.kind_names)
    epoch_seconds = model.history_["seconds"]
    print(json.dumps({
        "overrides": overrides, "shape": list(data.train.shape), "threads": torch.get_num_threads(),
        "fit_seconds": round(fit_seconds, 1), "fit_cpu_seconds": round(cpu_seconds, 1), "epochs_run": len(epoch_seconds),
        "epoch_seconds_median": round(float(np.median(epoch_seconds)), 2),
        "roc_auc": {k: round(v, 4) for k, v in aucs.items()},
    }), flush=True)


if __name__ == "__main__":
    main()
