"""What a candidate at-once join of the discord part (``at_once_join.py``) does to paging: the
rule of ``benchmarks/incidents.py`` run over its candidate shapes with that reading, the default
shape's row beside its choice, and the held-out server series under each.

The candidate replaces the discord part's causal reading (:meth:`Discord.at_once` and its
training reading :meth:`Discord.reference_at_once`, which the fit's statistics and incident
calibration read) by the subsequence ending at t of a join of the shortest join's length (at
most 48 rows) in segments of ``--segment`` rows (0: today's reading), and its weight at once by
``--factor`` times today's. Fits and scores go to a cache of their own per candidate (the
benchmark keys its cache by commit only).

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/studies/incidents/at_once_join_paging.py \\
        --segment 3 --factor 1.5 --cache CACHE --out RECORD.json
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/: incidents, benchlib
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/studies/: lib

DEFAULT_SHAPE = "higher k=3 n=5 close=20 x0.8 settle=1L spike=3.0"  # the default policy's


def use_candidate(segment: int, factor: float) -> None:
    """Read the discord part at once through the candidate join, at ``factor`` times today's
    weight at once (``segment`` 0: today's join)."""
    import numpy as np
    from lib import segmented_join

    from madcluster.score import input_terms
    from madcluster.score.discord import Discord

    for weights in (input_terms.CONTINUOUS_AT_ONCE_WEIGHTS, input_terms.DISCRETE_AT_ONCE_WEIGHTS):
        weights["discord"] *= factor
    if segment == 0:
        return

    def at_once(self: Discord, rows: np.ndarray) -> np.ndarray:
        return segmented_join(self, segment).trailing(rows)

    def reference_at_once(self: Discord, rows: np.ndarray) -> np.ndarray:
        return segmented_join(self, segment).reference_trailing(rows)

    Discord.at_once, Discord.reference_at_once = at_once, reference_at_once


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--segment", type=int, required=True, help="rows per segment; 0: today's")
    parser.add_argument("--factor", type=float, default=1.0, help="times today's weight at once")
    parser.add_argument("--cache", required=True, help="this candidate's fits and scores")
    parser.add_argument("--out", required=True, help="the benchmark's record for this candidate")
    args = parser.parse_args()
    use_candidate(args.segment, args.factor)
    import incidents
    from benchlib import incident_events

    sys.argv = ["incidents.py", "--cache", args.cache, "--out", args.out]
    incidents.main()
    import json

    record = json.loads(Path(args.out).read_text())
    held = {
        f"{f}-{s}": incidents.series_scores(f, s, n, Path(args.cache))
        for f, s, n in incidents.HELD_OUT
    }
    shapes = [s for s in itertools.product(*incidents.SHAPES.values()) if s[0] <= s[1]]
    names = {incidents.shape_name(lv, s): (lv, s) for lv in incidents.LEVELS for s in shapes}

    def held_row(level: str, shape: tuple) -> dict[str, dict]:
        return {
            name: incidents.summary(
                [incident_events(incidents.policy_spans(a, shape, level), a["labels"])]
            )
            for name, a in held.items()
        }

    def cells(row: dict) -> str:
        caught, delay = f"{row['caught']} of {row['anomalies']}", row["median_delay"]
        return f"{caught}, {row['false_per_10k']}, {delay}"

    families = list(record["left_out"])
    both = 0
    lines = ["| shape | " + " | ".join([*families, *held]) + " |"]
    lines.append("|---" * (1 + len(families) + len(held)) + "|")
    for name in [DEFAULT_SHAPE, record["chosen"]]:
        row = record["grid"][name]
        on_held = held_row(*names[name])
        lines.append(
            f"| {name} | "
            + " | ".join([*(cells(row[f]) for f in families), *(cells(on_held[h]) for h in held)])
            + " |"
        )
    for name, (level, shape) in names.items():
        rows = record["grid"].get(name)
        if rows is None or not all(
            rows[f]["false_per_10k"] <= incidents.BUDGET
            and rows[f]["median_delay"] <= incidents.MAX_DELAY
            for f in families
        ):
            continue
        both += all(
            h["caught"] == h["anomalies"]
            and h["false_per_10k"] <= incidents.BUDGET
            and h["median_delay"] <= incidents.MAX_DELAY
            for h in held_row(level, shape).values()
        )
    print("\n".join(lines))
    print(
        f"\nchosen: {record['chosen']} (holds on every family: "
        f"{record['chosen_holds_everywhere']}); shapes within the budget and delay on every family"
        f" that also catch every held-out anomaly within them: {both}"
    )


if __name__ == "__main__":
    main()
