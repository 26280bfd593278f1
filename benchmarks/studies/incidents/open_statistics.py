"""Would another opening statistic page slow-starting anomalies sooner than k of the last n?

The default opens when 5 of the last 5 at-once scores pass the open level (or one score twice it).
An anomaly that lifts the score only a little, but for many rows (a frequency change, a stuck
channel drifting away), might be seen sooner by a statistic that accumulates: the mean of the
last ``n`` scores, an exponentially weighted mean, a CUSUM. Two readings, from the scores
``benchmarks/incidents.py`` caches (the newest fit of each series):

1. the rule of ``benchmarks/incidents.py`` run over its own candidates plus the same shapes
   opening on the *mean* of the last ``n`` scores (``n`` 5, 10, 20; each calibrated on the
   validation rows as the package calibrates the count, an exponential tail of incident
   strengths): what it chooses, and with each family left out;
2. a bound no default reaches: per statistic, the lowest level (a multiple of ``threshold_``, in
   steps of 2 %) at which a series' *own test rows* raise at most 2 false incidents per 10,000
   normal rows and stay open on at most 5 % of the rows away from anomalies (a CUSUM left open
   all along would catch everything), and the median delay there, on the development families and, as a diagnostic
   only (never chosen on), on the held-out server series.

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/studies/incidents/open_statistics.py
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/: benchlib, incidents

import incidents as rule
from benchlib import incident_events

SERIES = [(f, s, 5000) for f in ("chaotic", "rhythm", "server", "point", "drift") for s in range(4)]
HELD_OUT = [("server", 7, 5000), ("server", 8, 10000)]
WINDOW = 100  # every series' model has the default window
MEAN_ROWS = (5, 10, 20)
Span = tuple[int, int, int]


def cached(cache: Path, family: str, seed: int, n_test: int) -> dict[str, np.ndarray]:
    """The newest cached scores of one series (``benchmarks/incidents.py --reuse`` reads these)."""
    found = sorted(cache.glob(f"{family}-{seed}-{n_test}_*.npz"), key=lambda p: p.stat().st_mtime)
    if not found:
        raise SystemExit(f"no cached scores of {family}-{seed}: run benchmarks/incidents.py first")
    return {**np.load(found[-1]), "commit": np.asarray(found[-1].stem.split("_")[-1])}


def trailing_mean(scores: np.ndarray, n: int) -> np.ndarray:
    """Per row, the mean of the last ``n`` scores (-inf before ``n`` rows)."""
    sums = np.concatenate([[0.0], np.cumsum(np.asarray(scores, dtype=np.float64))])
    out = np.full(len(scores), -np.inf)
    out[n - 1 :] = (sums[n:] - sums[:-n]) / n
    return out


def mean_spans(
    scores: np.ndarray,
    level: float,
    n: int,
    close_rows: int,
    close_fraction: float,
    spike: float | None,
    settle: int = 0,
) -> list[Span]:
    """The policy opening on the mean of the last ``n`` settled scores since the stream's start
    or the last close (else as ``IncidentTracker``: the spike path, the close with hysteresis);
    incidents ``(start, end, raised)``, the start the first of those rows above ``level``."""
    close, spike_level = close_fraction * level, None if spike is None else spike * level
    out: list[Span] = []
    ring: list[float] = []
    opened: tuple[int, int] | None = None
    last = quiet = 0
    for t, score in enumerate(np.asarray(scores, dtype=np.float64).tolist()):
        if opened is not None:
            if score >= close:
                last, quiet = t, 0
            else:
                quiet += 1
                if quiet >= close_rows:
                    out.append((opened[0], last, opened[1]))
                    opened, ring = None, []
            continue
        if t >= settle:
            ring = [*ring[-(n - 1) :], score] if n > 1 else [score]
        spiked = t >= settle and spike_level is not None and score > spike_level
        if (len(ring) == n and sum(ring) / n > level) or spiked:
            hot = [i for i, s in enumerate(ring) if s > level] or [len(ring) - 1]
            opened, last, quiet = (t - len(ring) + 1 + hot[0], t), t, 0
    if opened is not None:
        out.append((opened[0], len(scores) - 1, opened[1]))
    return out


def mean_budget_level(
    validation: np.ndarray, n: int, close_rows: int, close_fraction: float, spike: float | None
) -> float | None:
    """The level for ``rule.BUDGET`` false incidents per 10,000 rows of the mean opening, measured
    as ``IncidentCalibration`` measures the count's (base: the highest level raising ten
    incidents; an exponential tail of their strengths); None with fewer than two incidents."""
    from madcluster.incidents.calibration import BASE_QUANTILES, TAIL_COUNT

    statistic = trailing_mean(validation, n)
    if spike is not None:
        statistic = np.maximum(statistic, validation / spike)
    finite = statistic[np.isfinite(statistic)]
    base, strengths = float(finite.max()), []
    for level in np.unique(np.quantile(finite, BASE_QUANTILES))[::-1]:
        found = mean_spans(validation, float(level), n, close_rows, close_fraction, spike)
        if len(found) > len(strengths):
            base, strengths = float(level), [float(statistic[s : e + 1].max()) for s, e, _ in found]
        if len(found) >= TAIL_COUNT:
            break
    if len(strengths) < 2:
        return None
    excess = max(float(np.mean(np.asarray(strengths) - base)), 1e-12)
    target = rule.BUDGET * len(validation) / 10_000
    return base + excess * max(0.0, math.log(len(strengths) / target))


_LEVELS: dict[tuple, float | None] = {}


def mean_policy_spans(arrays: dict[str, np.ndarray], shape: tuple, level: str) -> list[Span]:
    """``rule.policy_spans`` for the mean opening (``shape``: n, n, close rows, close fraction,
    settle windows, spike factor)."""
    _, n, close_rows, fraction, settle, spike = shape
    open_level = float(arrays["threshold"])
    if level in ("budget", "higher"):
        key = (id(arrays), n, close_rows, fraction, spike)
        if key not in _LEVELS:
            _LEVELS[key] = mean_budget_level(arrays["validation"], n, close_rows, fraction, spike)
        budget = _LEVELS[key]
        if budget is not None:
            open_level = budget if level == "budget" else max(open_level, budget)
    return mean_spans(
        arrays["at_once"], open_level, n, close_rows, fraction, spike, settle * WINDOW
    )


def choose(data: dict[str, list[dict]]) -> None:
    """Section 1: the rule over today's candidates and the mean openings."""
    families = list(data)

    def measure(spans_of: Callable[[dict], list[Span]], family: str) -> dict:
        return rule.summary([incident_events(spans_of(a), a["labels"]) for a in data[family]])

    flags = {
        f: measure(lambda a: rule.merged_flags(a["at_once"], float(a["threshold"])), f)
        for f in families
    }
    grid: dict[str, dict[str, dict]] = {}
    counts = [s for s in itertools.product(*rule.SHAPES.values()) if s[0] <= s[1]]
    for level, shape in itertools.product(rule.LEVELS, counts):
        spans_of = lambda a, s=shape, lv=level: rule.policy_spans(a, s, lv)
        grid[rule.shape_name(level, shape)] = {f: measure(spans_of, f) for f in families}
    means = [(n, n, *rest) for n in MEAN_ROWS for rest in itertools.product(
        *[v for k, v in rule.SHAPES.items() if k not in ("k", "n")])]  # fmt: skip
    for level, shape in itertools.product(rule.LEVELS, means):
        name = "mean of n " + rule.shape_name(level, shape).replace(f"k={shape[0]} ", "")
        spans_of = lambda a, s=shape, lv=level: mean_policy_spans(a, s, lv)
        grid[name] = {f: measure(spans_of, f) for f in families}
    print(f"candidates: {len(counts) * len(rule.LEVELS)} k of n, {len(means) * len(rule.LEVELS)} "
          "mean of n")  # fmt: skip
    print("| chosen on | candidate | family | caught | false per 10,000 | median delay | holds |")
    print("|---|---|---|---|---|---|---|")
    for pool, names in (
        ("k of n only", [g for g in grid if not g.startswith("mean")]),
        ("mean of n only", [g for g in grid if g.startswith("mean")]),
        ("both", list(grid)),
    ):
        for left_out in (None, *families):
            chosen = max(names, key=lambda g: rule.rank(grid[g], flags, left_out))
            shown = families if left_out is None else [left_out]
            for f in shown:
                r = grid[chosen][f]
                where = "all" if left_out is None else f"others ({f} left out)"
                print(
                    f"| {pool}: {where} | {chosen} | {f} | {r['caught']} of {r['anomalies']} "
                    f"| {r['false_per_10k']} | {r['median_delay']} "
                    f"| {'yes' if rule.holds(r, flags[f]) else 'no'} |"
                )


def cusum(scores: np.ndarray, reference: float) -> np.ndarray:
    """S_t = max(0, S_{t-1} + score_t - reference)."""
    out, total = np.empty(len(scores)), 0.0
    for t, score in enumerate(scores.tolist()):
        total = max(0.0, total + score - reference)
        out[t] = total
    return out


def ewma(scores: np.ndarray, alpha: float) -> np.ndarray:
    out, mean = np.empty(len(scores)), float(scores[0])
    for t, score in enumerate(scores.tolist()):
        mean = (1 - alpha) * mean + alpha * score
        out[t] = mean
    return out


def statistics() -> dict[str, Callable[[np.ndarray], np.ndarray]]:
    """Opening statistics in the threshold's units (scores divided by it), each with the spike
    path at 2x (the CUSUMs without: their units are rows x score)."""
    from madcluster.incidents.calibration import kth_largest_trailing

    def spiked(f: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
        return lambda z: np.maximum(f(z), z / 2.0)

    return {
        "5 of 5 (today)": spiked(lambda z: kth_largest_trailing(z, 5, 5)),
        "2 of 5": spiked(lambda z: kth_largest_trailing(z, 2, 5)),
        "5 of 10": spiked(lambda z: kth_largest_trailing(z, 5, 10)),
        "mean of 5": spiked(lambda z: trailing_mean(z, 5)),
        "mean of 10": spiked(lambda z: trailing_mean(z, 10)),
        "mean of 20": spiked(lambda z: trailing_mean(z, 20)),
        "EWMA 0.3": spiked(lambda z: ewma(z, 0.3)),
        "EWMA 0.1": spiked(lambda z: ewma(z, 0.1)),
        "CUSUM above 1x": lambda z: cusum(z, 1.0),
        "CUSUM above 2x": lambda z: cusum(z, 2.0),
    }


def bound(statistic: np.ndarray, labels: np.ndarray) -> tuple[int, int, list[int], float] | None:
    """The lowest level (from 0.5 of the statistic's unit up, in steps of 2 %: the CUSUMs' reach
    hundreds) at which the series' own test rows raise <= ``rule.BUDGET`` false per 10,000
    while open on at most ``rule.MAX_OPEN_SHARE`` of the rows away from anomalies."""
    from madcluster.incidents.policy import IncidentPolicy, track

    last = len(statistic) - 1
    for multiple in np.geomspace(0.5, 1000.0, 385):  # steps of 2 %
        policy = IncidentPolicy.at(
            float(multiple), k=1, n=1, close_rows=10, settle_rows=WINDOW, spike_factor=None
        )
        found = [(i.start, last if i.end is None else i.end, i.raised)
                 for i in track(statistic, policy)]  # fmt: skip
        measured = incident_events(found, labels)
        open_share = measured["open_quiet_rows"] / max(measured["quiet_rows"], 1)
        if (
            10_000 * measured["false"] / measured["normal_rows"] <= rule.BUDGET
            and open_share <= rule.MAX_OPEN_SHARE  # not one incident open all along
        ):
            return measured["caught"], measured["anomalies"], measured["delays"], float(multiple)
    return None


def bounds(data: dict[str, list[dict]], held: dict[str, dict]) -> None:
    """Section 2: each statistic's bound per development family, then per held-out series."""
    columns = {**{f: data[f] for f in ("server", "rhythm", "chaotic")},
               **{name: [a] for name, a in held.items()}}  # fmt: skip
    print("| statistic | " + " | ".join(columns) + " |")
    print("|---|" + "---|" * len(columns))
    for name, statistic in statistics().items():
        cells = []
        for series in columns.values():
            caught = total = 0
            delays: list[int] = []
            multiples = []
            for a in series:
                found = bound(statistic(a["at_once"] / float(a["threshold"])), a["labels"])
                if found is None:
                    cells.append("none")
                    break
                caught, total = caught + found[0], total + found[1]
                delays += found[2]
                multiples.append(f"{found[3]:.3g}")
            else:
                delay = float(np.median(delays)) if delays else None
                cells.append(f"{caught} of {total}, {delay} (x{' '.join(multiples)})")
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", default=str(Path.home() / ".cache" / "madcluster-incidents"))
    parser.add_argument("--skip-rule", action="store_true", help="section 2 only")
    cache = Path(parser.parse_args().cache)
    data: dict[str, list[dict]] = {}
    for family, seed, n_test in SERIES:
        data.setdefault(family, []).append(cached(cache, family, seed, n_test))
    held = {f"{f}-{s}": cached(cache, f, s, n) for f, s, n in HELD_OUT}
    commits = sorted({str(a["commit"]) for v in [*data.values(), [*held.values()]] for a in v})
    print(f"scores from {', '.join(commits)}\n")
    if not parser.parse_args().skip_rule:
        print("1. the rule over k of n and mean of n")
        choose(data)
    print("\n2. the bound: each statistic at the lowest level the series' own test rows allow")
    bounds(data, held)


if __name__ == "__main__":
    main()
