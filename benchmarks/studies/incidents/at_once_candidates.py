"""A causal reading of the discord part, and its weight at once, chosen with two families left out.

The discord part added nothing at once: the at-once score lost its whole term, the largest of
the swaps ``at_once_parts.py`` measures on the chaotic and server families. Its causal reading
here is the distance of the shortest join's subsequence *ending* at t (``Discord.at_once``; all a
stream knows of the step's subsequences then), standardised with the same reading of the
training rows (``Discord.reference_at_once``) and weighted by a share of the part's weight: it
stays on an anomaly m - 1 rows after it, so a full share may cost more after anomalies than it
gains on them. The other parts' at-once terms are today's (cached by ``at_once_parts.py``).

The share is chosen on the development families other than ``server`` and ``drift`` (left out,
reported beside) by the issue's own measure: the smallest largest gap between a family's final
and at-once ROC-AUC. Printed beside it, what two other rules pick: no choice family more than
``TOLERANCE`` below today's at-once score (the water family loses with every share, so it keeps
today's), and the smallest worst shortfall against each family's best share.

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/studies/incidents/at_once_candidates.py \\
        --cache /tmp/at_once_parts
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/: benchlib
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/studies/: lib

from lib import SEEDS_AT_ONCE, at_once_readings, roc_auc

SHARES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0)  # 0: today (nothing at once)
LEFT_OUT = ("server", "drift")
TOLERANCE = 0.005


def discord_term(family: str, seed: int, cache: Path) -> np.ndarray:
    """The discord part's at-once term of one cached series at share 1 (its weight, the
    causal reading standardised with its training reading's statistics, 0 before the first
    subsequence ends)."""
    from madcluster import MADCluster
    from madcluster.data.families import make_family
    from madcluster.score.combination import mean_std
    from madcluster.score.discord import Discord
    from madcluster.score.legacy import recast

    detector = MADCluster.load(cache / f"{family}-{seed}-5000.mcz")
    combination = detector.model_.combination
    part = next(p for p in combination.parts if p.name == "discord")
    part = recast(part, Discord)  # the fitted part, with its causal reading
    series = make_family(family, seed, n_test=5000)
    mean, std = mean_std(part.reference_at_once(series.train))
    z = (part.at_once(series.test) - mean) / std
    term = combination.weights["discord"] * np.maximum(z, 0.0)
    return np.where(np.isnan(term), 0.0, term)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", required=True, help="at_once_parts.py's cache")
    parser.add_argument("--families", nargs="*", default=None, help="default: ALL_FAMILIES")
    parser.add_argument(
        "--seeds", type=int, default=len(SEEDS_AT_ONCE), help="series per family (seeds 0..N-1)"
    )
    args = parser.parse_args()
    from madcluster.data.families import ALL_FAMILIES

    cache = Path(args.cache)
    families = args.families or list(ALL_FAMILIES)
    table: dict[str, dict[float, float]] = {}
    finals: dict[str, float] = {}
    for family in families:
        series = [at_once_readings(family, seed, cache) for seed in range(args.seeds)]
        terms = [discord_term(family, seed, cache) for seed in range(args.seeds)]
        finals[family] = float(np.mean([roc_auc(s["labels"], s["final"]) for s in series]))
        table[family] = {
            share: float(
                np.mean(
                    [
                        roc_auc(s["labels"], s["at_once"] + share * term)
                        for s, term in zip(series, terms, strict=True)
                    ]
                )
            )
            for share in SHARES
        }
    chosen_on = [f for f in families if f not in LEFT_OUT]
    if not chosen_on:  # left-out families alone: their table, no choice
        for family in families:
            cells = " | ".join(f"{table[family][s]:.3f}" for s in SHARES)
            print(f"| {family} (left out) | {finals[family]:.3f} | {cells} |")
        return

    def largest_gap(share: float) -> float:
        return max(finals[f] - table[f][share] for f in chosen_on)

    def no_loss(share: float) -> tuple[bool, float]:
        worst = min(table[f][share] - table[f][0.0] for f in chosen_on)
        return worst >= -TOLERANCE, float(np.mean([table[f][share] for f in chosen_on]))

    def shortfall(share: float) -> float:
        return min(table[f][share] - max(table[f].values()) for f in chosen_on)

    chosen = min(SHARES, key=largest_gap)
    lines = [
        "| family | final | " + " | ".join(f"at once, share {s:g}" for s in SHARES) + " |",
        "|---|---|" + "---|" * len(SHARES),
    ]
    for family in families:
        left = " (left out)" if family in LEFT_OUT else ""
        cells = " | ".join(
            f"**{table[family][s]:.3f}**" if s == chosen else f"{table[family][s]:.3f}"
            for s in SHARES
        )
        lines.append(f"| {family}{left} | {finals[family]:.3f} | {cells} |")
    for name, group in (("chosen on", chosen_on), ("left out", list(LEFT_OUT))):
        group = [f for f in group if f in table]
        if group:
            means = " | ".join(f"{np.mean([table[f][s] for f in group]):.3f}" for s in SHARES)
            final = np.mean([finals[f] for f in group])
            lines.append(f"| mean, {name} | {final:.3f} | {means} |")
    gaps = ", ".join(f"{s:g}: {largest_gap(s):.3f}" for s in SHARES)
    loose = max(SHARES, key=shortfall)
    lines += [
        "",
        f"Chosen: share {chosen:g} (share 0 is today's: nothing at once); the largest gap to the "
        + f"final ROC-AUC over the choice families by share: {gaps}.",
        f"No choice family more than {TOLERANCE} below today: share {max(SHARES, key=no_loss):g}; "
        + "the smallest worst shortfall against each family's best share: share "
        + f"{loose:g} ({shortfall(loose):.3f}).",
    ]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
