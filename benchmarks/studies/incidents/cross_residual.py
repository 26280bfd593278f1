"""Would a same-step cross-column residual page the slow-starting server anomalies sooner?

The late held-out anomalies (a request cycle 4x faster, the CPU channel replaying another time, a
stuck channel) break how the columns move *together* from their first row, but every part reads
them slowly at once: the next-step part predicts each column from the last rows alone (a replayed
CPU channel is smooth within itself), the window parts need a window's worth of rows. The term
measured here predicts each column from the *other columns at the same step* and the last
``LAGS`` rows of all (a ridge fit on the training rows, as the next-step part's), squares the
error of each column, standardises it per column with its training errors (so a noisy column does
not drown the rest), averages over the columns and adds its positive z-score (training mean and
deviation) times ``w`` to the at-once score, test and validation rows alike. Final scores are not
touched. Three readings, from the scores ``benchmarks/incidents.py`` caches (the newest fit of
each series):

1. the rule of ``benchmarks/incidents.py`` over its candidates on the at-once score with the term,
   per weight: what it chooses, whether that holds on every family, the choice with each family
   left out, and the held-out server series under the choice (never chosen on);
2. a bound no default reaches: today's shape (5 of 5, spike 2x) at the lowest level at which each
   series' own test rows raise at most 2 false incidents per 10,000 normal rows and stay open on at
   most 5 % of the rows away from anomalies.

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/studies/incidents/cross_residual.py
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/: benchlib, incidents

import incidents as rule
from benchlib import incident_events

SERIES = [(f, s, 5000) for f in ("chaotic", "rhythm", "server", "point", "drift") for s in range(4)]
HELD_OUT = [("server", 7, 5000), ("server", 8, 10000)]
WEIGHTS = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0)
DEFAULT_SHAPE = (5, 5, 10, 0.5, 1, 2.0)  # the shape before this study
BEFORE = "95c3ecc"  # the scores incidents.md was made from before this study (no cross part)
WINDOW = 100  # every series' model has the default window


def cross_term(train: np.ndarray, rows: np.ndarray, weight: float) -> np.ndarray:
    """The ``cross`` part's term at once on ``rows`` (``madcluster.score.cross_residual``, fitted on
    ``train``, standardised by its training values as the combination does; 0 on a series with
    fewer than two continuous columns)."""
    from madcluster.score.combination import mean_std
    from madcluster.score.cross_residual import CrossResidual

    part = CrossResidual.fit(train)
    mean, std = mean_std(part.values(train))
    return weight * np.maximum((part.values(rows) - mean) / std, 0.0)


def cached(cache: Path, family: str, seed: int, n_test: int, commit: str) -> dict[str, np.ndarray]:
    """The scores ``benchmarks/incidents.py`` cached for one series at ``commit`` (one from before
    the default had the term: ``git checkout`` it and run ``benchmarks/incidents.py`` to make
    them)."""
    path = cache / f"{family}-{seed}-{n_test}_{commit}.npz"
    if not path.exists():
        raise SystemExit(f"no cached scores of {family}-{seed} at {commit}: see --commit")
    return {**np.load(path), "commit": np.asarray(commit)}


def with_term(arrays: dict, family: str, seed: int, n_test: int, weight: float) -> dict:
    """The series' cached scores with the term added at once (test and validation rows)."""
    from madcluster.data.families import make_family

    series = make_family(family, seed, n_test=n_test)
    n_val = len(arrays["validation"])
    return {
        **arrays,
        "at_once": arrays["at_once"] + cross_term(series.train, series.test, weight),
        "validation": arrays["validation"]
        + cross_term(series.train, series.train, weight)[-n_val:],
    }


def choose(
    data: dict[str, list[dict]], held: dict[str, dict], before: dict[str, list[dict]]
) -> None:
    """Section 1 for one weight: the rule's choice, with each family left out, and held out. The
    rule's cap on how long incidents stay open follows the at-once flags *before* the term
    (``before``): with the term in them the flags stay open longer and the cap would loosen."""
    families = list(data)

    def measure(arrays_list: list[dict], level: str, shape: tuple) -> dict:
        return rule.summary([incident_events(rule.policy_spans(a, shape, level), a["labels"])
                             for a in arrays_list])  # fmt: skip

    flags = {f: rule.summary([incident_events(rule.merged_flags(a["at_once"], float(a["threshold"])),
                                              a["labels"]) for a in before[f]]) for f in families}  # fmt: skip
    grid, keys = {}, {}
    shapes = [s for s in itertools.product(*rule.SHAPES.values()) if s[0] <= s[1]]
    for level, shape in itertools.product(rule.LEVELS, shapes):
        name = rule.shape_name(level, shape)
        grid[name] = {f: measure(data[f], level, shape) for f in families}
        keys[name] = (level, shape)
    print("| chosen on | candidate | family | caught | false per 10,000 | median delay | per series "
          "| open, away from anomalies | holds |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    for left_out in (None, *families):
        chosen = max(grid, key=lambda g: rule.rank(grid[g], flags, left_out))
        for f in families if left_out is None else [left_out]:
            r = grid[chosen][f]
            where = "all" if left_out is None else f"others ({f} left out)"
            print(f"| {where} | {chosen} | {f} | {r['caught']} of {r['anomalies']} | "
                  f"{r['false_per_10k']} | {r['median_delay']} | {rule.series_delays(r)} | "
                  f"{r['open_share']:.1%} | {'yes' if rule.holds(r, flags[f]) else 'no'} |",
                  flush=True)  # fmt: skip
        if left_out is None:
            for name, arrays in held.items():
                r = measure([arrays], *keys[chosen])
                print(f"| held out | {chosen} | {name} | {r['caught']} of {r['anomalies']} | "
                      f"{r['false_per_10k']} | {r['median_delay']} | | {r['open_share']:.1%} | |",
                      flush=True)  # fmt: skip


def bound(arrays: dict) -> tuple[int, int, list[int], float] | None:
    """Today's shape at the lowest level (x ``threshold_``, steps of 2 %) the series' own test
    rows allow: <= ``rule.BUDGET`` false per 10,000 normal rows, open on <= 5 % of quiet rows."""
    from madcluster.incidents.policy import IncidentPolicy, track

    k, n, close_rows, fraction, settle, spike = DEFAULT_SHAPE
    scores, last = arrays["at_once"], len(arrays["at_once"]) - 1
    for multiple in np.geomspace(0.5, 50.0, 234):
        policy = IncidentPolicy.at(float(multiple) * float(arrays["threshold"]), k=k, n=n,
                                   close_rows=close_rows, close_fraction=fraction,
                                   settle_rows=settle * WINDOW, spike_factor=spike)  # fmt: skip
        found = [
            (i.start, last if i.end is None else i.end, i.raised) for i in track(scores, policy)
        ]
        m = incident_events(found, arrays["labels"])
        if (10_000 * m["false"] / m["normal_rows"] <= rule.BUDGET
                and m["open_quiet_rows"] / max(m["quiet_rows"], 1) <= rule.MAX_OPEN_SHARE):  # fmt: skip
            return m["caught"], m["anomalies"], m["delays"], float(multiple)
    return None


def bounds(columns: dict[str, list[dict]]) -> list[str]:
    cells = []
    for series in columns.values():
        caught = total = 0
        delays: list[int] = []
        for a in series:
            found = bound(a)
            if found is None:
                cells.append("none")
                break
            caught, total, delays = caught + found[0], total + found[1], delays + found[2]
        else:
            cells.append(f"{caught} of {total}, {float(np.median(delays)) if delays else None}")
    return cells


def parts_table(cache: Path, commit: str) -> None:
    """Mean ROC-AUC per family of the default's scores cached by ``benchmarks/incidents.py`` at
    ``commit`` (one with ``cross``): final, at once, at once without ``cross`` (the final
    parts' at-once score) and ``cross``'s term alone (the difference)."""
    from sklearn.metrics import roc_auc_score

    print("| series | final | at once | at once without cross | cross alone |")
    print("|---|---|---|---|---|")
    groups = {
        f: [(f, s, 5000) for s in range(4)]
        for f in ("chaotic", "rhythm", "server", "point", "drift")
    }
    groups.update({f"{f}-{s}": [(f, s, n)] for f, s, n in HELD_OUT})
    for name, keys in groups.items():
        cells: dict[str, list[float]] = {"final": [], "once": [], "without": [], "cross": []}
        for key in keys:
            a = cached(cache, *key, commit)
            if "at_once_final_parts" not in a:
                raise SystemExit(
                    f"the scores at {commit} have no at_once_final_parts: not a commit with cross"
                )
            term = a["at_once"] - a["at_once_final_parts"]
            for cell, scores in (("final", a["final"]), ("once", a["at_once"]),
                                 ("without", a["at_once_final_parts"]), ("cross", term)):  # fmt: skip
                if np.ptp(scores) > 0:  # cross is 0 on a series of one column
                    cells[cell].append(roc_auc_score(a["labels"], scores))
        text = [f"{np.mean(v):.3f}" if v else "0 (one column)" for v in cells.values()]
        print(f"| {name} | " + " | ".join(text) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", default=str(Path.home() / ".cache" / "madcluster-incidents"))
    parser.add_argument("--weights", nargs="*", type=float, default=list(WEIGHTS))
    parser.add_argument("--commit", default=BEFORE, help="the cached scores' commit (before cross)")
    parser.add_argument("--skip-rule", action="store_true", help="section 2 only")
    parser.add_argument("--skip-bound", action="store_true", help="section 1 only")
    parser.add_argument(
        "--parts-at",
        metavar="COMMIT",
        help="only the ROC-AUC table of the parts, "
        "from benchmarks/incidents.py's scores at COMMIT (one with cross)",
    )
    args = parser.parse_args()
    cache = Path(args.cache)
    if args.parts_at:
        parts_table(cache, args.parts_at)
        return
    base = {key: cached(cache, *key, args.commit) for key in [*SERIES, *HELD_OUT]}
    commits = sorted({str(a["commit"]) for a in base.values()})
    print(f"scores from {', '.join(commits)}\n")
    readings = {0.0: base}
    for w in args.weights:
        readings[w] = {key: with_term(a, *key, w) for key, a in base.items()}
    if not args.skip_rule:
        for w in args.weights:
            print(f"\n1. the rule with the term at weight {w:g}")
            data: dict[str, list[dict]] = {}
            before: dict[str, list[dict]] = {}
            for f, s, n in SERIES:
                data.setdefault(f, []).append(readings[w][(f, s, n)])
                before.setdefault(f, []).append(base[(f, s, n)])
            choose(data, {f"{f}-{s}": readings[w][(f, s, n)] for f, s, n in HELD_OUT}, before)
    if args.skip_bound:
        return
    print("\n2. the bound: 5 of 5, spike 2x, at the lowest level each series' own test rows allow")
    families = ("server", "rhythm", "chaotic", "point", "drift")
    print("| weight | " + " | ".join([*families, "server-7", "server-8"]) + " |")
    print("|---|" + "---|" * (len(families) + 2))
    for w, arrays in readings.items():
        columns = {f: [arrays[(f, s, 5000)] for s in range(4)] for f in families}
        columns.update({f"{f}-{s}": [arrays[(f, s, n)]] for f, s, n in HELD_OUT})
        print(f"| {w:g} | " + " | ".join(bounds(columns)) + " |", flush=True)


if __name__ == "__main__":
    main()
