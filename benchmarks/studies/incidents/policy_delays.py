"""Why the incident policy pages late on the held-out server series and falsely on rhythm and point.

Reads the scores ``benchmarks/incidents.py`` caches (the newest fit of each series, any commit)
and says, for the previous default (open when 2 of the last 5 at-once scores pass the higher of
``threshold_`` and the level calibrated for 2 false incidents per 10,000 normal rows) and today's:

1. per development family, its false incidents and how many of them start in the stream's first
   window (the at-once score's start-up, which no calibration measured);
2. per anomaly of the held-out series (never chosen on), the rows from its start until the
   at-once score first passes ``threshold_``, until it first passes the open level, and until
   each policy raised an incident catching it;
3. a bound no default can reach: per server series, each k-of-n shape at the lowest level (a
   multiple of ``threshold_``, in steps of 0.1) at which that series' *own test rows* raise at
   most 2 false incidents per 10,000 normal rows, its anomalies caught and median delay. It is
   tuned on the labels it is measured on, so it only says how early any level could page.

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/studies/incidents/policy_delays.py
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/: benchlib

from benchlib import INCIDENT_SLACK, incident_events, labelled_anomalies

SERIES = [(f, s, 5000) for f in ("chaotic", "rhythm", "server", "point", "drift") for s in range(4)]
HELD_OUT = [("server", 7, 5000), ("server", 8, 10000)]
BUDGET = 2.0
WINDOW = 100  # every series' model has the default window
BOUND_SHAPES = ((2, 5), (5, 5), (5, 10), (10, 20), (20, 30))


def cached(cache: Path, family: str, seed: int, n_test: int) -> dict[str, np.ndarray]:
    """The newest cached scores of one series (``benchmarks/incidents.py --reuse`` reads these)."""
    found = sorted(cache.glob(f"{family}-{seed}-{n_test}_*.npz"), key=lambda p: p.stat().st_mtime)
    if not found:
        raise SystemExit(f"no cached scores of {family}-{seed}: run benchmarks/incidents.py first")
    return dict(np.load(found[-1]))


def policies(arrays: dict[str, np.ndarray]) -> dict[str, object]:
    """The previous default and today's, as each opens on this series."""
    from madcluster.incidents.calibration import IncidentCalibration
    from madcluster.incidents.policy import IncidentPolicy

    threshold = float(arrays["threshold"])
    out = {}
    for name, k, spike, settle in (("2 of 5", 2, None, 0), ("today", 5, 2.0, WINDOW)):
        calibration = IncidentCalibration.measure(arrays["validation"], k=k, spike_factor=spike)
        level = max(threshold, calibration.level_for(BUDGET))
        out[name] = IncidentPolicy.at(level, k=k, spike_factor=spike, settle_rows=settle)
    return out


def spans(scores: np.ndarray, policy: object) -> list[tuple[int, int, int]]:
    from madcluster.incidents.policy import track

    last = len(scores) - 1
    return [(i.start, last if i.end is None else i.end, i.raised) for i in track(scores, policy)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", default=str(Path.home() / ".cache" / "madcluster-incidents"))
    cache = Path(parser.parse_args().cache)

    print("1. false incidents, and those starting in the stream's first window")
    print("| family | 2 of 5: false | of them in the first window | today: false |")
    print("|---|---|---|---|")
    for family in ("chaotic", "rhythm", "server", "point", "drift"):
        counts = np.zeros(3, dtype=int)
        for _, seed, n_test in [s for s in SERIES if s[0] == family]:
            arrays = cached(cache, family, seed, n_test)
            chosen = policies(arrays)
            for column, name in ((0, "2 of 5"), (2, "today")):
                found = spans(arrays["at_once"], chosen[name])
                false = incident_events(found, arrays["labels"])["false_spans"]
                counts[column] += len(false)
                if column == 0:
                    counts[1] += sum(start < WINDOW for start, _, _ in false)
        print(f"| {family} | {counts[0]} | {counts[1]} | {counts[2]} |")

    print("\n2. held-out anomalies: rows from the start until ...")
    print("| series | anomaly | rows | > threshold_ | > 2 of 5's open level | 2 of 5 raised "
          "| today raised |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for family, seed, n_test in HELD_OUT:
        arrays = cached(cache, family, seed, n_test)
        scores, chosen = arrays["at_once"], policies(arrays)
        raised = {name: spans(scores, policy) for name, policy in chosen.items()}
        ratio = chosen["2 of 5"].open_level / float(arrays["threshold"])
        print(f"| {family}-{seed} | (2 of 5's open level: {ratio:.2f} x threshold_) | | | | | |")
        for a, b in labelled_anomalies(arrays["labels"]):
            reach = scores[a : b + INCIDENT_SLACK + 1]

            def first(level: float, reach: np.ndarray = reach) -> str:
                above = np.flatnonzero(reach > level)
                return str(int(above[0])) if len(above) else "never"

            def caught(name: str, a: int = a, b: int = b, raised: dict = raised) -> str:
                hits = [r for s, e, r in raised[name] if s <= b + INCIDENT_SLACK and e >= a]
                return str(max(0, min(hits) - a)) if hits else "missed"

            print(
                f"| {family}-{seed} | {a}-{b} | {b - a + 1} | {first(float(arrays['threshold']))} "
                f"| {first(chosen['2 of 5'].open_level)} | {caught('2 of 5')} | {caught('today')} |"
            )

    print("\n3. the bound: each shape at the lowest level its own test rows allow (<= 2 false)")
    print("| series | " + " | ".join(f"{k} of {n}" for k, n in BOUND_SHAPES) + " |")
    print("|---|" + "---|" * len(BOUND_SHAPES))
    from madcluster.incidents.policy import IncidentPolicy

    for family, seed, n_test in HELD_OUT + [s for s in SERIES if s[0] == "server"]:
        arrays = cached(cache, family, seed, n_test)
        threshold, cells = float(arrays["threshold"]), []
        for k, n in BOUND_SHAPES:
            cell = "none"
            for multiple in np.round(np.arange(0.8, 3.01, 0.1), 1):
                policy = IncidentPolicy.at(
                    multiple * threshold, k=k, n=n, settle_rows=WINDOW, spike_factor=None
                )
                measured = incident_events(spans(arrays["at_once"], policy), arrays["labels"])
                if 10_000 * measured["false"] / measured["normal_rows"] <= BUDGET:
                    delay = np.median(measured["delays"]) if measured["delays"] else None
                    cell = f"{measured['caught']} of {measured['anomalies']}, {delay} (x{multiple})"
                    break
            cells.append(cell)
        print(f"| {family}-{seed} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
