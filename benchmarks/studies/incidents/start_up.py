"""Where the at-once score's start-up comes from: each part's at-once term on a stream's first
window of normal rows against the rest, and the window-KMeans part's causal reading with its grid
windows that start before the series (padded with the first row, today's reading) left out.

Why: most false incidents of the former default started on a stream's first window
(``policy_delays.py``), which the policy now skips (``settle``), so an anomaly there never pages.
This reads which part raises the score there and what reading only the windows that start at or
after the series' first row would give (the at-once ROC-AUC of the total beside it). The
detectors are fitted here (the default, ``random_state=0``); nothing is cached.

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/studies/incidents/start_up.py \\
        --families rhythm point --seeds 0
"""

from __future__ import annotations

import argparse

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", nargs="+", default=["rhythm", "point"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    args = parser.parse_args()

    import madcluster.score.kmeans_prefix as prefix
    from madcluster import MADCluster
    from madcluster.data.families import make_family
    from madcluster.metrics.pointwise import auc_roc

    padded = prefix._first_start

    def from_row_0(part, step: int) -> int:  # the grid's windows starting at or after row 0
        return max(0, padded(part, step))

    print(
        "| series | reading | part | first window: mean | max | after: mean | p99 | at-once ROC-AUC |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for family in args.families:
        for seed in args.seeds:
            series = make_family(family, seed, n_test=5000)
            model = MADCluster(random_state=0).fit(series.train).model_
            combination, window = model.combination, model.grid.window_size
            rows = model.inputs.check_rows(series.test)
            own = model.own_scores(model.inputs.model_input(rows))
            normal = series.labels == 0
            first = np.arange(len(rows)) < window
            for label, first_start in (("padded (today)", padded), ("from row 0", from_row_0)):
                prefix._first_start = first_start
                try:
                    readings = combination.at_once_readings(rows, own)
                    total = combination.at_once_score(rows, own)
                finally:
                    prefix._first_start = padded
                roc = auc_roc(total, series.labels)
                for part in combination.parts:
                    term = combination.contribution(part, readings[part.name], at_once=True)
                    head, rest = term[first & normal], term[~first & normal]
                    print(
                        f"| {family}-{seed} | {label} | {part.name} | {head.mean():.2f} | "
                        f"{head.max():.2f} | {rest.mean():.2f} | {np.quantile(rest, 0.99):.2f} | "
                        f"{roc:.4f} |",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
