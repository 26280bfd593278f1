"""The discord part's join read at once: its subsequence length and segments, and its weight at
once, chosen with each development family left out in turn.

At once the discord part reads the distance of its *shortest* join's subsequence ending at t
(``Discord.at_once``): 48 raw rows. On series with a long period the final reading's strength is
the period's join, averaged over segments; the short raw join is noisy there (on the held-out
server series it ranks anomalies at ROC-AUC .57 to .66 alone, the period's join .96 to .97
final), and the period's own subsequence ending at t stays on an anomaly up to 300 rows after
it. The candidates here: a join of its own for the at-once reading, ``SHORT_LENGTH`` rows
averaged over segments of ``p`` rows (``p`` = 1 is today's reading where the period is at least
48 rows; below, today reads the period's join and its segments), its weight at once ``w``
(a factor of today's: 2 where the columns are continuous), its statistics from its training reading as the fit
reads them. The other parts' at-once terms and every final score are the fitted detector's.

Chosen by the issue's measure (the largest gap over the choice families between a family's
mean final and at-once ROC-AUC, then the mean at-once ROC-AUC), with each family left out in turn
and measured on it; the held-out server series (seeds 7 and 8) are reported, never chosen on.

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/studies/incidents/at_once_join.py \\
        --cache CACHE --held-out-cache CACHE_HELD_OUT

``--cache`` holds (or gets) the default detector fitted on each family's series
(``{family}-{seed}-5000.mcz``, ``random_state=0``); ``--held-out-cache`` the held-out server
fits of ``held_out_parts.py`` (``server-7-5000.mcz``, ``server-8-10000.mcz``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/: benchlib
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/studies/: lib

from lib import cached_default, part_terms, roc_auc, segmented_join

SEGMENTS = (1, 2, 3, 4, 6, 8)  # 1: today's reading (the short join itself)
WEIGHTS = (0.5, 1.0, 1.5)  # times today's weight at once (1: today's)
SEEDS = range(4)
HELD_OUT = (("server", 7, 5000), ("server", 8, 10000))


def candidates(family: str, seed: int, n_test: int, cache: Path) -> dict[str, float]:
    """One series' at-once ROC-AUC per candidate (``p/w``), its final and today's at-once one."""
    from madcluster.score.combination import RULES

    series, detector = cached_default(family, seed, n_test, cache)
    model = detector.model_
    c = model.combination
    terms = part_terms(model, series.test)
    labels = series.labels
    out = {"final": roc_auc(labels, terms["final"]), "today": roc_auc(labels, terms["at_once"])}
    if "discord" not in c.names:
        return out | {f"{p}/{w}": out["today"] for p in SEGMENTS for w in WEIGHTS}
    part = c.parts[c.names.index("discord")]
    train, test = model.inputs.check_rows(series.train), model.inputs.check_rows(series.test)
    statistics = RULES[c.rule].fitted_to(train).statistics
    rule = RULES[c.at_once_rule]
    others = terms["at_once"] - terms["once/discord"]
    today = c.at_once_weight("discord")
    today_join = part.joins[part.at_once_join]  # the join read at once
    for p in SEGMENTS:
        join = segmented_join(part, p)
        stats = statistics(join.reference_trailing(train))
        reading = join.trailing(test)
        for w in WEIGHTS:
            term = np.nan_to_num(rule.part(reading, stats, w * today), nan=0.0)
            out[f"{p}/{w}"] = roc_auc(labels, others + term)
            if (join.length, join.segment, w) == (today_join.length, today_join.segment, 1.0):
                # today's reading rebuilt: the detector's own at-once score
                np.testing.assert_allclose(others + term, terms["at_once"], atol=1e-6)
    return out


def choose(table: dict[str, dict[str, float]], families: list[str]) -> str:
    """The candidate with the smallest largest final - at-once gap over ``families``, then the
    highest mean at-once ROC-AUC."""
    keys = [f"{p}/{w}" for p in SEGMENTS for w in WEIGHTS]

    def score(key: str) -> tuple[float, float]:
        gaps = [table[f]["final"] - table[f][key] for f in families]
        return (round(max(gaps), 4), -float(np.mean([table[f][key] for f in families])))

    return min(keys, key=score)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", required=True, help="the families' fitted detectors")
    parser.add_argument("--held-out-cache", required=True, help="held_out_parts.py's cache")
    parser.add_argument("--families", nargs="*", default=None, help="default: ALL_FAMILIES")
    parser.add_argument("--json", default=None, help="write the table here too")
    args = parser.parse_args()
    from madcluster.data.families import ALL_FAMILIES

    families = args.families or list(ALL_FAMILIES)
    cache, held_cache = Path(args.cache), Path(args.held_out_cache)
    cache.mkdir(parents=True, exist_ok=True)
    table: dict[str, dict[str, float]] = {}
    for family in families:
        rows = [candidates(family, seed, 5000, cache) for seed in SEEDS]
        table[family] = {k: float(np.mean([r[k] for r in rows])) for k in rows[0]}
        print(f"{family}: read", file=sys.stderr, flush=True)
    held = {f"{f}-{s}": candidates(f, s, n, held_cache) for f, s, n in HELD_OUT}
    keys = ["final", "today", *(f"{p}/{w}" for p in SEGMENTS for w in WEIGHTS)]
    chosen = choose(table, families)
    head = "| family | " + " | ".join(keys) + " |"
    lines = [head, "|" + "---|" * (len(keys) + 1)]
    for name, row in [*table.items(), *held.items()]:
        cells = [f"**{row[k]:.3f}**" if k == chosen else f"{row[k]:.3f}" for k in keys]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    gaps = {k: max(table[f]["final"] - table[f][k] for f in families) for k in keys[1:]}
    lines.append("| largest gap | | " + " | ".join(f"{gaps[k]:.3f}" for k in keys[1:]) + " |")
    lines += ["", f"Chosen on every family: `{chosen}` (segment rows / weight at once).", ""]
    lines += ["| left out | chosen on the others | its at-once ROC-AUC there | today's | final |"]
    lines += ["|---|---|---|---|---|"]
    for family in families if len(families) > 1 else []:  # one family: none left to choose on
        pick = choose(table, [f for f in families if f != family])
        row = table[family]
        lines.append(
            f"| {family} | {pick} | {row[pick]:.3f} | {row['today']:.3f} | {row['final']:.3f} |"
        )
    print("\n".join(lines))
    if args.json:
        Path(args.json).write_text(json.dumps({"families": table, "held_out": held}, indent=1))


if __name__ == "__main__":
    main()
