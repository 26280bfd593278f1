"""Where the at-once score loses against the final one, part by part, per development family.

For each series (``madcluster.data.families``, seeds 0-3) the default detector
(``random_state=0``, as ``benchmarks/incidents.py`` fits it) is fitted once and kept; each part's
term of the test rows' score is read twice: final (``Combination.final_contributions`` of the
whole series' readings, whose rule total is ``decision_function``) and at once (the causal
reading, ``Combination.contribution(..., at_once=True)``, whose total is what a stream answers
first). Besides each part's ROC-AUC at once and final, the at-once total with one part's at-once
term swapped for its final one: the ROC-AUC that part's reading ahead costs. The readings (and
the validation rows' at-once readings, the end of the training rows, read as a stream started two
windows before them) are cached per series for the candidate study (``at_once_candidates.py``).

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/studies/incidents/at_once_parts.py \\
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", required=True, help="folder of the fitted series' readings")
    parser.add_argument("--families", nargs="*", default=None, help="default: FAMILIES")
    args = parser.parse_args()
    from madcluster.data.families import FAMILIES

    families = args.families or list(FAMILIES)
    lines = [
        "| family | part | weight | at once | final | at once, this part final |",
        "|---|---|---|---|---|---|",
    ]
    for family in families:
        series = [at_once_readings(family, seed, Path(args.cache)) for seed in SEEDS_AT_ONCE]
        names = [str(n) for n in series[0]["parts"]]
        total_once = np.mean([roc_auc(s["labels"], s["at_once"]) for s in series])
        total_final = np.mean([roc_auc(s["labels"], s["final"]) for s in series])
        lines.append(f"| {family} | **total** | | {total_once:.3f} | {total_final:.3f} | |")
        for name in names:
            once = np.mean([roc_auc(s["labels"], s[f"once/{name}"]) for s in series])
            final = np.mean([roc_auc(s["labels"], s[f"final/{name}"]) for s in series])
            swapped = np.mean([roc_auc(s["labels"], swap(s, names, name)) for s in series])
            weight = float(series[0][f"weight/{name}"])
            lines.append(
                f"| {family} | {name} | {weight:.2f} | {once:.3f} | {final:.3f} | {swapped:.3f} |"
            )
    print("\n".join(lines))


def swap(arrays: dict[str, np.ndarray], names: list[str], final_part: str) -> np.ndarray:
    """The at-once total (the positive parts' sum) with ``final_part``'s term its final one."""
    return np.sum([arrays[f"{'final' if n == final_part else 'once'}/{n}"] for n in names], axis=0)


if __name__ == "__main__":
    main()
