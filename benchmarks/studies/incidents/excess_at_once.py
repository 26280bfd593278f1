"""The at-once score read with each part's excess over its training tail at a lower quantile than
the final rule's option (``TailExcessSum`` at .98): does the policy then hold with families left
out (as it did at .98) *and* catch every held-out server anomaly (as the positive sum does)?

The default's final score (the positive sum) is unchanged; only what a stream answers first, and
so the incident calibration and the policy, read each part's z-score less ``t_p`` (the ``q``
quantile of its z-scores on its causal training reading, at least 0) plus 0.05 of its positive
z-score. Runs ``benchmarks/incidents.py`` (its families, held-out series, grid and rule) with that
reading patched in for the run, its cache under a tag of its own
(``INCIDENTS_COMMIT=<commit>-excess<q>``), and writes its record and markdown to ``--out``.

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/studies/incidents/excess_at_once.py \\
        --quantile 0.9 --out benchmarks/results/incidents_excess90_at_once.json
    # the same scores (no new fit), the level's floor on the at-once scale
    INCIDENTS_COMMIT=... python benchmarks/studies/incidents/excess_at_once.py --quantile 0.9 \\
        --at-once-floor 0.01 --out ...
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/: benchlib, incidents

import incidents as rule


def patch(quantile: float) -> None:
    """Fits record each part's tail (a third statistic, which the positive sum ignores) and the
    at-once contributions read the excess over it."""
    from madcluster.score.combination import Combination
    from madcluster.score.rules import TailExcessSum

    fit, contribution = Combination.fit.__func__, Combination.contribution
    rule = TailExcessSum(quantile)
    tail = rule.statistics

    def fit_with_tails(cls, names, rows, own, *args, **kwargs):
        c = fit(cls, names, rows, own, *args, **kwargs)
        read = [p.bind(own) for p in c.parts]
        stats = {p.name: tail(p.reference_values(rows)) for p in read}
        at_once = {p.name: tail(p.reference_at_once(rows)) for p in read if p.reads_ahead}
        return replace(c, stats=stats, at_once_stats=at_once)

    def at_once_excess(self, part, values, at_once=False, scale=1.0):
        term = contribution(self, part, values, at_once, scale)
        if not at_once:
            return term
        weight = self.weights.get(part.name, 1.0)
        if part.reads_ahead:
            from madcluster.score.combination import AT_ONCE_SHARES

            weight *= AT_ONCE_SHARES.get(part.name, 1.0)
        stats = self.at_once_stats[part.name] if part.reads_ahead else self.stats[part.name]
        excess = rule.part(values, stats, weight)
        return np.where(np.isnan(excess), 0.0, excess)

    Combination.fit = classmethod(fit_with_tails)
    Combination.contribution = at_once_excess


def at_once_floor(share: float) -> None:
    """Each series' ``threshold`` (the floor of its incident level, and its flags' level) read on
    the at-once scale: the ``1 - share`` quantile of the at-once scores of its last training
    rows (the in-sample calibration's rows), as ``threshold_`` is of the final training scores."""
    scores = rule.series_scores

    def with_floor(*args, **kwargs):
        arrays = dict(scores(*args, **kwargs))
        arrays["threshold"] = np.asarray(float(np.quantile(arrays["in_sample"], 1.0 - share)))
        return arrays

    rule.series_scores = with_floor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quantile", type=float, default=0.9)
    parser.add_argument("--out", required=True)
    parser.add_argument(
        "--at-once-floor",
        type=float,
        default=None,
        metavar="SHARE",
        help="the level's floor and the flags at the 1 - SHARE quantile of the at-once scores of "
        "the last training rows (default: threshold_, the final scores')",
    )
    args, rest = parser.parse_known_args()
    # the scores' cache tag: given (to read a run's scores again), else this code's and q's
    os.environ.setdefault("INCIDENTS_COMMIT", f"{rule.commit()}-excess{args.quantile:g}")
    patch(args.quantile)
    if args.at_once_floor is not None:
        at_once_floor(args.at_once_floor)
    sys.argv = [sys.argv[0], "--out", args.out, *rest]
    rule.main()


if __name__ == "__main__":
    main()
