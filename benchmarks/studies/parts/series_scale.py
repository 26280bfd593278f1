"""Issue 34, a part that moved on the scored series (held-out set C's runaway network part, the
drifting family): each part's contribution divided by its spread on the scored series, tried on
the development families and the shifted-normal proxy.

Rule: the default's weighted positive z-scores (weights from the training columns), each part's
divided by ``max(1, s)``, ``s`` its z-scores' spread on the scored series: the interquartile range
/ 1.349 (``iqr``), the median absolute deviation x 1.4826 (``mad``) or the larger of the MAD and
the median (``max(mad, median)``), read on the whole series or on its first N steps (what a stream
can fix once N steps are final). A part high on most rows (a new normal, a drifting level) then
counts in units of its spread there; a part high on a few rows (an anomaly) keeps its training
scale. Also each part alone (its positive z-score), for each family's best single part, and the
worst family's shortfall against it (the issue's bar: -.02). Reads ``part_study.py``'s caches and
``shifted_parts.py``'s dumps as ``agreement_cap.py`` does::

    python benchmarks/studies/parts/series_scale.py --bundle /tmp/dev_bundle.npz \\
        --cache /tmp/part_cache --shifted /tmp/shifted

Chosen: ``first 3000, iqr`` (``MADCluster(series_scale_rows=3000)``, the default since):
``benchmarks/results/parts/series_scale.md``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/: benchlib
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/studies/: lib

import lib

PARTS = lib.PARTS
FIRST = (1000, 2000, 3000, 4000)


def iqr(z: np.ndarray) -> float:
    q25, q75 = np.quantile(z, [0.25, 0.75])
    return float(q75 - q25) / 1.349


def mad(z: np.ndarray) -> float:
    return 1.4826 * float(np.median(np.abs(z - np.median(z))))


SPREADS: dict[str, Callable[[np.ndarray], float]] = {
    "iqr": iqr,
    "mad": mad,
    "max(mad, median)": lambda z: max(mad(z), float(np.median(z))),
}


def scores(z: dict, z_train: dict, weights: dict, labels: np.ndarray, first: np.ndarray) -> dict:
    from lib import alert_spread

    from madcluster.metrics.tsbad import tsbad_vus

    excess = {p: weights[p] * np.maximum(z[p], 0.0) for p in PARTS}
    totals = {f"part: {p}": np.maximum(z[p], 0.0) for p in PARTS}
    totals["default (training scales)"] = sum(excess.values())
    for name, spread in SPREADS.items():
        totals[f"whole series, {name}"] = sum(excess[p] / max(1.0, spread(z[p])) for p in PARTS)
        for n in FIRST:
            totals[f"first {n}, {name}"] = sum(
                excess[p] / max(1.0, spread(z[p][:n])) for p in PARTS
            )
    out = {k: tsbad_vus(v, labels, first)[1] for k, v in totals.items()}
    # where the alerts fall (issue 34 item 5), for the training scales and the chosen rule
    for rule in ("default (training scales)", "first 3000, iqr"):
        precision, smear = alert_spread(totals[rule], labels)
        out[f"precision@k: {rule}"], out[f"smear: {rule}"] = precision, smear
    return out


def main() -> None:
    from lib import read_bundle, study_arguments

    args = study_arguments(
        __doc__, cache="part_study.py's cache folder", shifted="shifted_parts.py's dumps"
    )
    bundle, cache = read_bundle(args.bundle), Path(args.cache)
    rows, family = lib.family_rows(bundle, cache, scores)  # its readers, these rules
    shifted = lib.shifted_rows(Path(args.shifted), bundle, cache, scores)
    fams = sorted(set(family.values()))
    rules = list(next(iter(rows.values())))
    mean = {r: [np.mean([rows[s][r] for s in rows if family[s] == f]) for f in fams] for r in rules}
    best = np.max([mean[f"part: {p}"] for p in PARTS], axis=0)
    print("| rule | " + " | ".join(fams) + " | 46 TSB-AD | worst shortfall | shifted proxy: as is | shifted |")
    print("|---|" + "---|" * (len(fams) + 4))
    for rule in rules:
        dev = np.mean([rows[s][rule] for s in rows if family[s].startswith("tsbad")])
        measure = rule.startswith(("part:", "precision@k:", "smear:"))
        worst = "" if measure else f"{np.min(np.asarray(mean[rule]) - best):+.3f}"
        proxy = [np.mean(shifted[(kind, rule)]) for kind in ("test", "shifted")]
        cells = [f"{c:.3f}" for c in [*mean[rule], dev]] + [worst] + [f"{c:.3f}" for c in proxy]
        print(f"| {rule} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
