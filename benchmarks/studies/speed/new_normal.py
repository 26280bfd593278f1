"""A new normal (issue 36 item 5): after a permanent level shift, how many recent rows and seconds a
refit needs to stop alarming, warm-started from the model (``MADCluster.refit``) against a refit
from scratch.

    python benchmarks/studies/speed/new_normal.py                        # the default detector
    python benchmarks/studies/speed/new_normal.py --set epochs=4         # another configuration

The series is the synthetic suite's ``seasonal`` base (six channels, like server metrics), seed 0:
the model is fitted on its first 10,000 training rows; then channels 0-2 move for good by
``--shift`` of their training standard deviation (a deploy, a migration). The next 10,000 rows
(normal, shifted) are the recent rows: a refit reads their first n (``--rows``), and the alarm rate
(score above ``threshold_``) is measured on the last 5,000, which no refit reads, and on the
normal rows of the suite's test part (shifted too, with the suite's anomalies, whose ROC-AUC is
reported: a refit that stops alarming by going blind would show there). One torch thread, one JSON
line per refit; seconds are the refit's wall and CPU seconds.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/: benchlib
from benchlib import parse_overrides

from madcluster import MADCluster
from madcluster.data.synthetic import make_anomaly_suite, roc_auc_by_kind


def alarms(model: MADCluster, rows: np.ndarray, normal: np.ndarray | None = None) -> float:
    flags = model.decision_function(rows) > model.threshold_
    return float(flags[normal].mean() if normal is not None else flags.mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE", help="override a MADCluster parameter")
    parser.add_argument("--rows", nargs="*", type=int, default=[1000, 2000, 5000])
    parser.add_argument("--warm-epochs", nargs="*", type=int, default=[1, 3])
    parser.add_argument("--shift", type=float, default=2.0, help="level shift, in training standard deviations")
    parser.add_argument("--no-scratch", action="store_true", help="skip the refits from scratch")
    args = parser.parse_args()
    torch.set_num_threads(1)
    overrides = parse_overrides(args.set)
    data = make_anomaly_suite("seasonal", n_train=20_000, n_test=10_000, seed=0)
    train = data.train[:10_000]
    shift = np.zeros(train.shape[1], dtype=train.dtype)
    shift[:3] = args.shift * train[:, :3].std(axis=0)
    recent, held_out = data.train[10_000:] + shift, data.train[15_000:] + shift
    test, normal = data.test + shift, data.kinds == -1

    def record(what: str, model: MADCluster, rows: int, seconds: tuple[float, float] | None) -> None:
        aucs = roc_auc_by_kind(model.decision_function(test), data.kinds, data.kind_names)
        line = {"overrides": overrides, "refit": what, "rows": rows, "epochs_run": len(model.history_["epoch"]),
                "seconds": None if seconds is None else round(seconds[0], 2),
                "cpu_seconds": None if seconds is None else round(seconds[1], 2),
                "alarm_rate_held_out": round(alarms(model, held_out), 4), "alarm_rate_test_normal": round(alarms(model, test, normal), 4),
                "test_roc_auc": round(aucs["all"], 4)}
        print(json.dumps(line), flush=True)

    base = MADCluster(random_state=0, **overrides)
    started = time.perf_counter(), time.process_time()
    base.fit(train)
    record("none (fitted before the shift)", base, 0, (time.perf_counter() - started[0], time.process_time() - started[1]))
    state = base.model_.net.state_dict()
    for n in args.rows:
        for epochs in args.warm_epochs:
            model = _copy(base, state)
            started = time.perf_counter(), time.process_time()
            model.refit(recent[:n], epochs=epochs)
            record(f"warm, {epochs} epochs", model, n, (time.perf_counter() - started[0], time.process_time() - started[1]))
        if not args.no_scratch:
            model = _copy(base, state)
            started = time.perf_counter(), time.process_time()
            model.refit(recent[:n], from_scratch=True)
            record("from scratch", model, n, (time.perf_counter() - started[0], time.process_time() - started[1]))


def _copy(model: MADCluster, state: dict) -> MADCluster:
    """A detector that is ``model`` as fitted (its network's weights ``state``), to refit apart."""
    import copy

    twin = copy.deepcopy(model)
    twin.model_.net.load_state_dict(state)
    return twin


if __name__ == "__main__":
    main()
