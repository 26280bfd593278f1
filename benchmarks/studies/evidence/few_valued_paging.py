"""What the few-valued rule does to flags and incidents on MSL and SMAP channels (table 13 of
``benchmarks/results/parts/evidence.md``): the part of the default a person is paged by.

Why: ``few-valued-tail-excess`` ranks the few-valued series better (VUS-PR), but its final score
sits on another scale (each part's excess over its training q .99 is 0 on most training rows, so
``threshold_`` falls), and incidents read the at-once score. Three readings of the same channels,
each fitted once (``random_state=0``, ``epochs`` below):

* ``positive sum``: ``part_rule="positive-zscore-sum"``, the rule before;
* ``excess at once``: the few-valued rule read at once too (its first form, before
  ``FewValuedTailExcessSum.AT_ONCE_RULE``);
* ``default``: the few-valued rule in the final score, the positive sum at once.

Per reading: the point F1, precision and recall of ``predict`` and the share of rows it flags;
``incidents(X)``: how many, how many false (overlapping no anomaly widened by 50 rows), and how
many anomalies caught (an incident overlaps it or starts within 50 rows after its start).

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/studies/evidence/few_valued_paging.py \\
        --data-dir ../shared/datasets
"""

from __future__ import annotations

import argparse
import warnings
from contextlib import contextmanager

import numpy as np

WIDEN = 50  # rows around an anomaly an incident may touch and not be false
READINGS = ("positive sum", "excess at once", "default")


@contextmanager
def excess_at_once():
    """The few-valued rule read at once with its excess, as it was first written."""
    from madcluster.score.rules import FewValuedTailExcessSum

    kept = FewValuedTailExcessSum.AT_ONCE_RULE
    FewValuedTailExcessSum.AT_ONCE_RULE = None
    try:
        yield
    finally:
        FewValuedTailExcessSum.AT_ONCE_RULE = kept


def events(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each anomaly's first row and the row after its last."""
    edges = np.diff(np.r_[0, labels.astype(int), 0])
    return np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)


def incident_counts(incidents, labels: np.ndarray) -> tuple[int, int, int]:
    """(incidents, false ones, anomalies caught) of an ``incidents(X)`` frame."""
    import pandas as pd

    starts, ends = events(labels)
    wide = labels.astype(bool).copy()
    for a, b in zip(starts, ends, strict=True):
        wide[max(0, a - WIDEN) : b + WIDEN] = True
    caught = np.zeros(len(starts), dtype=bool)
    false = 0
    for start, end in zip(incidents["start"], incidents["end"], strict=True):
        start = int(start)
        stop = len(labels) if pd.isna(end) else int(end) + 1
        false += not wide[start:stop].any()
        caught |= ((start < ends) & (stop > starts)) | ((starts <= start) & (start <= starts + WIDEN))
    return len(incidents), false, int(caught.sum())


def one(reading: str, train: np.ndarray, test: np.ndarray, labels: np.ndarray, epochs: int) -> list:
    from sklearn.metrics import f1_score, precision_score, recall_score

    from madcluster import MADCluster

    rule = "positive-zscore-sum" if reading == "positive sum" else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if reading == "excess at once":
            with excess_at_once():
                detector = MADCluster(random_state=0, epochs=epochs, part_rule=rule).fit(train)
                incidents = detector.incidents(test)
        else:
            detector = MADCluster(random_state=0, epochs=epochs, part_rule=rule).fit(train)
            incidents = detector.incidents(test)
        flags = detector.predict(test)
    return [
        f1_score(labels, flags),
        precision_score(labels, flags, zero_division=0),
        recall_score(labels, flags),
        float(flags.mean()),
        *incident_counts(incidents, labels),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--per-dataset", type=int, default=7, help="channels of MSL and of SMAP")
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args()
    from madcluster.data.datasets import load_dataset

    totals = {r: [] for r in READINGS}
    print("| channel | reading | F1 | precision | recall | flagged | incidents | false | caught |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in ("MSL", "SMAP"):
        data = load_dataset(name, args.data_dir)
        chosen = [e for e in data.entities if data.labels[e.test_slice].sum() > 0]
        for entity in chosen[::4][: args.per_dataset]:  # every fourth: spread over the set
            train, test = data.train[entity.train_slice], data.test[entity.test_slice]
            labels = data.labels[entity.test_slice].astype(bool)
            n_events = len(events(labels)[0])
            for reading in READINGS:
                row = one(reading, train, test, labels, args.epochs)
                totals[reading].append([*row, n_events])
                print(
                    f"| {name} {entity.name} | {reading} | {row[0]:.3f} | {row[1]:.3f} | "
                    f"{row[2]:.3f} | {row[3]:.3f} | {row[4]} | {row[5]} | {row[6]} of {n_events} |",
                    flush=True,
                )
    print("\n| reading | mean F1 | precision | recall | flagged | incidents | false | caught |")
    print("|---|---|---|---|---|---|---|---|")
    for reading, rows in totals.items():
        a = np.asarray(rows, dtype=float)
        print(
            f"| {reading} | {a[:, 0].mean():.3f} | {a[:, 1].mean():.3f} | {a[:, 2].mean():.3f} | "
            f"{a[:, 3].mean():.3f} | {a[:, 4].sum():.0f} | {a[:, 5].sum():.0f} | "
            f"{a[:, 6].sum():.0f} of {a[:, 7].sum():.0f} |"
        )


if __name__ == "__main__":
    main()
