"""The at-once score's cheap knobs, each chosen with every development family left out in turn.

The at-once score (what a stream answers first, what incidents read) sums each part's causal
term. Two kinds of candidates, neither touching the final scores:

* ``shares``: each part's share of its weight at once (``AT_ONCE_SHARES``; before: the discord
  part's alone, 2), from ``GRID`` each; one series' total at shares ``s`` is
  ``sum_p s_p * term_p`` (``term_p``: the part's at-once term at share 1; a part whose causal
  reading is its final one keeps share 1, as the code does);
* ``widths``: the trailing mean a point-wise part (own, AR) is read through at once, before
  half its centred width (25 of the own part's 50, 5 of the AR part's 10), standardised with the
  same trailing mean of its training values (the own part's training scores, the AR part's
  reference values, as the fit reads them: checked against the fitted statistics).

"Before" is the code before the own and AR parts' reading at t alone (``BEFORE_WIDTHS``; the
shares table reads them so). The KMeans part's term is ``at_once_parts.py``'s cache, the
discord's the cached detector's causal reading (at share 2 in ``widths``). Rule, the issue's
measure: the smallest largest gap between a family's final and at-once ROC-AUC over the choice
families (ties: the higher mean, then the candidate nearest the one before). Chosen ten times,
each family left out once: each family's at-once ROC-AUC under the candidate chosen without it,
beside the one before and its final; beside them what the highest mean over the choice families
would choose.

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/studies/incidents/at_once_choice.py \\
        --cache /tmp/at_once_parts --what shares widths
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/: benchlib
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/studies/: lib

from lib import SEEDS_AT_ONCE, at_once_readings, roc_auc

GRID = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0)
PARTS = ("own", "kmeans", "ar", "discord")
BEFORE = {"own": 1.0, "kmeans": 1.0, "ar": 1.0, "discord": 2.0}
OWN_WIDTHS = (1, 5, 10, 15, 25)  # before: 25
AR_WIDTHS = (1, 3, 5)  # before: 5
BEFORE_WIDTHS = (25, 5)


def series_terms(family: str, seed: int, cache: Path) -> dict[str, np.ndarray]:
    """One series' at-once terms at share 1 (``term/<part>``), whether the share applies
    (``apart/<part>``; the own and AR parts' at the widths before), the own and AR parts' raw
    values on the test and training rows (``raw/``, ``train/``), the parts' weights, labels and
    final scores; cached beside the readings. The total at the fit's own widths is checked
    against the stream's at-once scores."""
    path = cache / f"{family}-{seed}-5000-choice.npz"
    if path.exists():
        with np.load(path) as cached:
            return dict(cached)
    from benchlib import write_npz

    from madcluster import MADCluster
    from madcluster.data.families import make_family
    from madcluster.estimator.incident_scoring import at_once_scores
    from madcluster.score.combination import AT_ONCE_SHARES

    readings = at_once_readings(family, seed, cache)
    model = MADCluster.load(cache / f"{family}-{seed}-5000.mcz").model_
    combination, series = model.combination, make_family(family, seed, n_test=5000)
    test, train = (model.inputs.check_rows(x) for x in (series.test, series.train))
    out = {"labels": readings["labels"], "final": readings["final"]}
    for part in combination.parts:
        out[f"apart/{part.name}"] = np.asarray(part.reads_ahead)
        out[f"weight/{part.name}"] = np.asarray(combination.weights.get(part.name, 1.0))
        if part.name == "discord":  # the cache holds the term before its causal reading
            reading = part.at_once(test)
            term = combination.contribution(part, reading, at_once=True)
            out[f"term/{part.name}"] = term / AT_ONCE_SHARES.get(part.name, 1.0)
        elif part.name == "kmeans":
            out[f"term/{part.name}"] = readings[f"once/{part.name}"]
    for rows, kind in ((test, "raw"), (train, "train")):
        own = model.own_scores(model.inputs.model_input(rows))
        ar = next(p for p in combination.terms if p.name == "ar")  # as fitted, not smoothed
        out[f"{kind}/own"] = own
        out[f"{kind}/ar"] = ar.values(rows) if kind == "raw" else ar.reference_values(rows)
    by_name = {p.name: p for p in combination.parts}
    fitted = (by_name["own"].at_once_width, by_name["ar"].at_once_width)
    for name, width in zip(("own", "ar"), fitted, strict=True):  # the fit's statistics
        np.testing.assert_allclose(
            trailing_stats(out[f"train/{name}"], width), combination.at_once_stats[name], rtol=1e-9
        )
    np.testing.assert_allclose(
        at_widths(out, fitted), at_once_scores(model, series.test), rtol=1e-9, atol=1e-9
    )
    for name, term in zip(("own", "ar"), width_terms(out, BEFORE_WIDTHS), strict=True):
        out[f"term/{name}"] = term
    write_npz(path, out)
    print(f"{family}-{seed}: terms read", file=sys.stderr, flush=True)
    return out


def trailing_stats(values: np.ndarray, width: int) -> tuple[float, float]:
    from madcluster.score.combination import mean_std
    from madcluster.score.smoothing import trailing_means

    return mean_std(trailing_means(values, width))


def at_once(series: dict[str, np.ndarray], shares: dict[str, float]) -> np.ndarray:
    """The at-once total at ``shares`` (share 1 where the part's reading is its final one)."""
    return sum(
        (shares[p] if bool(series[f"apart/{p}"]) else 1.0) * series[f"term/{p}"] for p in PARTS
    )


def width_terms(series: dict[str, np.ndarray], widths: tuple[int, int]) -> list[np.ndarray]:
    """The own and AR parts' at-once terms (share 1) read through trailing means of ``widths``,
    each standardised with the same mean of its training values."""
    from madcluster.score.smoothing import trailing_means

    terms = []
    for name, width in zip(("own", "ar"), widths, strict=True):
        mean, std = trailing_stats(series[f"train/{name}"], width)
        z = (trailing_means(series[f"raw/{name}"], width) - mean) / std
        terms.append(float(series[f"weight/{name}"]) * np.maximum(z, 0.0))
    return terms


def at_widths(series: dict[str, np.ndarray], widths: tuple[int, int]) -> np.ndarray:
    """The at-once total (the shares before) with the own and AR parts read through trailing
    means of ``widths``."""
    own, ar = width_terms(series, widths)
    return (
        own
        + BEFORE["kmeans"] * series["term/kmeans"]
        + ar
        + BEFORE["discord"] * series["term/discord"]
    )


def choose(
    table: dict[str, dict], finals: dict[str, float], on: list[str], before: tuple, by_mean=False
):
    """The candidate with the smallest largest gap to the final ROC-AUC over the families ``on``
    (ties: the higher mean, then the nearest ``before``); ``by_mean``: the highest mean first."""

    def key(candidate: tuple) -> tuple:
        gap = max(finals[f] - table[f][candidate] for f in on)
        mean = float(np.mean([table[f][candidate] for f in on]))
        near = sum(abs(a - b) for a, b in zip(candidate, before, strict=True))
        if by_mean:
            return (-round(mean, 9), round(gap, 9), near)
        return (round(gap, 9), -round(mean, 9), near)

    return min(next(iter(table.values())), key=key)


def left_out_table(
    table: dict[str, dict], finals: dict[str, float], before: tuple, name: Callable[[tuple], str]
) -> list[str]:
    families = list(table)
    lines = [
        "| family left out | chosen without it | final | at once, before | at once, chosen "
        + "| by the mean rule | at once, so chosen |",
        "|---|---|---|---|---|---|---|",
    ]
    for family in families:
        others = [f for f in families if f != family]
        chosen = choose(table, finals, others, before)
        by_mean = choose(table, finals, others, before, by_mean=True)
        lines.append(
            f"| {family} | {name(chosen)} | {finals[family]:.3f} | {table[family][before]:.3f} | "
            + f"{table[family][chosen]:.3f} | {name(by_mean)} | {table[family][by_mean]:.3f} |"
        )
    everywhere = choose(table, finals, families, before)
    for label, candidate in (("before", before), ("chosen on all", everywhere)):
        gap = max(finals[f] - table[f][candidate] for f in families)
        mean = np.mean([table[f][candidate] for f in families])
        lines.append(f"| {label}: {name(candidate)} | | | | {mean:.3f} (largest gap {gap:.3f}) |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", required=True, help="at_once_parts.py's cache")
    parser.add_argument("--families", nargs="*", default=None, help="default: ALL_FAMILIES")
    parser.add_argument("--what", nargs="+", default=["shares", "widths"])
    args = parser.parse_args()
    from madcluster.data.families import ALL_FAMILIES

    cache = Path(args.cache)
    families = args.families or list(ALL_FAMILIES)
    series = {f: [series_terms(f, seed, cache) for seed in SEEDS_AT_ONCE] for f in families}
    finals = {
        f: float(np.mean([roc_auc(s["labels"], s["final"]) for s in series[f]])) for f in families
    }

    def table(score: Callable[[dict, tuple], np.ndarray], candidates: list) -> dict[str, dict]:
        return {
            f: {
                c: float(np.mean([roc_auc(s["labels"], score(s, c)) for s in series[f]]))
                for c in candidates
            }
            for f in families
        }

    if "shares" in args.what:
        shares = [c for c in itertools.product(GRID, repeat=len(PARTS)) if any(c)]
        by_shares = table(lambda s, c: at_once(s, dict(zip(PARTS, c, strict=True))), shares)
        print("Shares (own, kmeans, ar, discord):\n")
        print("\n".join(left_out_table(by_shares, finals, tuple(BEFORE.values()), str)))
        if "server" in by_shares:
            best = max(shares, key=lambda c: by_shares["server"][c])
            print(f"\nThe best share set on server alone: {best}, {by_shares['server'][best]:.3f}.")
    if "widths" in args.what:
        widths = list(itertools.product(OWN_WIDTHS, AR_WIDTHS))
        by_width = table(at_widths, widths)
        print("\nTrailing widths at once (own, ar):\n")
        print("\n".join(left_out_table(by_width, finals, BEFORE_WIDTHS, str)))
        lines = [
            "",
            "| family | final | " + " | ".join(map(str, widths)) + " |",
            "|---|---|" + "---|" * len(widths),
        ]
        for f in families:
            cells = " | ".join(f"{by_width[f][w]:.3f}" for w in widths)
            lines.append(f"| {f} | {finals[f]:.3f} | {cells} |")
        print("\n".join(lines))


if __name__ == "__main__":
    main()
