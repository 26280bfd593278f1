"""How well a small model's false-alarm budget holds: the held-out calibration (a few hundred
validation rows) against one measured in sample (the last training rows), per 10,000 new normal
rows (``incidents_policy.md``, section 8).

For each development family given, each number of training rows and each seed, the default
detector (``random_state=seed``) is fitted on the first rows of a longer normal series (the
family's training rows, ``madcluster.data.families``) and its at-once scores of the next 10,000
rows, normal too, are run through the default policy shape opening at: ``threshold_`` alone; the
higher of it and the held-out calibration's level for 2 false incidents per 10,000 (where its
incidents let a tail be fitted); the higher of it and an in-sample calibration's level; and what
the default does. The held-out calibration's incident count is beside each row: the rule "keep the
held-out calibration where its rows raise at least N incidents, else measure in sample" is read
off it.

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/studies/incidents/small_models.py \\
        --families server rhythm --rows 1000 1500 2000 3000 --seeds 0 1
"""

from __future__ import annotations

import argparse
import json
import sys

NORMAL_ROWS = 10_000


def measure(family: str, n_train: int, seed: int) -> dict:
    """One model's row (module docstring)."""
    from madcluster import MADCluster
    from madcluster.data.families import make_family
    from madcluster.estimator.incident_scoring import (
        at_once_scores,
        default_incident_policy,
        settle_rows,
        validation_at_once,
    )
    from madcluster.exceptions import ParameterError
    from madcluster.incidents.calibration import DEFAULT_FALSE_INCIDENTS, IncidentCalibration
    from madcluster.incidents.policy import track
    from madcluster.training.loop import validation_rows

    rows = make_family(family, seed, n_train=n_train + NORMAL_ROWS).train
    train, normal = rows[:n_train], rows[n_train:]
    detector = MADCluster(random_state=seed, verbose=False).fit(train)
    model = detector.model_
    window = model.grid.window_size
    n_val = validation_rows(n_train, detector.validation_size, window)
    held = IncidentCalibration.measure(
        validation_at_once(model, train, n_val), settle_rows=settle_rows(model)
    )
    inside = IncidentCalibration.measure(
        validation_at_once(model, train, n_train - 2 * window),
        settle_rows=settle_rows(model),
        in_sample=True,
    )
    scores = at_once_scores(model, normal)

    def false_incidents(calibration: IncidentCalibration | None) -> tuple[float, int]:
        level = model.threshold
        if calibration is not None:
            try:
                level = max(level, calibration.level_for(DEFAULT_FALSE_INCIDENTS))
            except ParameterError:
                pass
        policy = held.policy(level, confirm_level=model.threshold)
        return level, len(track(scores, policy))

    default = default_incident_policy(model)
    return {
        "family": family,
        "train_rows": n_train,
        "seed": seed,
        "validation_rows": held.rows,
        "held_out_incidents": len(held.strengths),
        "in_sample_incidents": len(inside.strengths),
        "default_in_sample": bool(getattr(model.incident_calibration, "in_sample", False)),
        "threshold": false_incidents(None),
        "held_out": false_incidents(held),
        "in_sample": false_incidents(inside),
        "default": (default.open_level, len(track(scores, default))),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", nargs="+", default=["server", "rhythm"])
    parser.add_argument("--rows", nargs="+", type=int, default=[1000, 1500, 2000, 3000])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    parser.add_argument("--json", default=None, help="write the rows here too")
    args = parser.parse_args()
    rows = []
    print(
        "| family | training rows | seed | validation rows | their incidents | false per "
        f"{NORMAL_ROWS:,} new normal rows: threshold_ alone | held out | in sample | "
        "the default |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for family in args.families:
        for n_train in args.rows:
            for seed in args.seeds:
                r = measure(family, n_train, seed)
                rows.append(r)
                cells = " | ".join(
                    f"{r[k][1]} ({r[k][0]:.3g})"
                    for k in ("threshold", "held_out", "in_sample", "default")
                )
                print(
                    f"| {family} | {n_train} | {seed} | {r['validation_rows']} "
                    f"| {r['held_out_incidents']} | {cells} |",
                    flush=True,
                )
    if args.json:
        from pathlib import Path

        Path(args.json).write_text(json.dumps(rows, indent=1))
    print(file=sys.stderr)


if __name__ == "__main__":
    main()
