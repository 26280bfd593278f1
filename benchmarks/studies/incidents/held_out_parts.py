"""Where the at-once score loses against the final one on the server series, part by part, with
the default as it is (``incidents_policy.md``, section 7).

For each series (the held-out server-7 and server-8 of ``benchmarks/incidents.py`` and the
``server`` family's seeds 0-3) the default detector (``random_state=0``) is fitted once and kept
in ``--cache``; each part's term is read at once (its causal reading, what a stream answers
first) and final (``decision_function``'s), with the ROC-AUC of the at-once total where that one
part's term is swapped for its final one (what its reading ahead costs the at-once score), and
the at-once total without the part at all.

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/studies/incidents/held_out_parts.py \\
        --cache CACHE
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/: benchlib
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/studies/: lib

from lib import cached_default, part_terms, roc_auc

SERIES = (("server", 7, 5000), ("server", 8, 10000), *(("server", s, 5000) for s in range(4)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", required=True, help="folder of the fitted detectors")
    args = parser.parse_args()

    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    lines = [
        (
            "| series | part | weight | at once | final | at once, this part final "
            "| at once, without this part |"
        ),
        "|---|---|---|---|---|---|---|",
    ]
    for family, seed, n_test in SERIES:
        name = f"{family}-{seed}-{n_test}"
        series, detector = cached_default(family, seed, n_test, cache)
        terms = part_terms(detector.model_, series.test)
        c = detector.model_.combination
        labels = series.labels
        lines.append(
            f"| {name} | **total** | | {roc_auc(labels, terms['at_once']):.3f} "
            f"| {roc_auc(labels, terms['final']):.3f} | | |"
        )
        for part in c.names:
            final = terms[f"final/{part}"]
            swapped = sum(terms[f"{'final' if p == part else 'once'}/{p}"] for p in c.names)
            without = terms["at_once"] - terms[f"once/{part}"]
            final_auc = f"{roc_auc(labels, final):.3f}" if final.any() else "(at once only)"
            lines.append(
                f"| {name} | {part} | {c.weights.get(part, 1.0):.2f} "
                f"| {roc_auc(labels, terms[f'once/{part}']):.3f} | {final_auc} "
                f"| {roc_auc(labels, swapped):.3f} | {roc_auc(labels, without):.3f} |"
            )
        print(f"{name}: read", file=sys.stderr, flush=True)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
