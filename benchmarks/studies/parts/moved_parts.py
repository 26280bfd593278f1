"""Issue 34, held-out set C's runaway part, second try: rules that read how long a part has been
high on the scored series, on the development families and the shifted-normal proxy.

Two rules, each on the default's weighted positive z-scores (weights from the training columns):

- ``moved W, phi``: a part's excess times ``clip((1 - f) / (1 - phi), 0, 1)``, ``f`` the share of
  the trailing ``W`` rows where the part was above its training 99th percentile (a part high on
  most recent rows has moved to a new normal; one high on a few sees an anomaly);
- ``trailing median W``: a part less the positive part of its median over the trailing ``W`` rows
  (each 50-row block reads the ``W`` rows before it; 0 for the first ``W / 2`` rows).

Both are causal, so a stream could give them at once. Reads ``part_study.py``'s caches and
``shifted_parts.py``'s dumps as ``agreement_cap.py`` does. Exploratory, not adopted
(``benchmarks/results/parts/weights.md``)::

    python benchmarks/studies/parts/moved_parts.py --bundle /tmp/dev_bundle.npz \\
        --cache /tmp/part_cache --shifted /tmp/shifted
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/: benchlib
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/studies/: lib

import lib

PARTS = lib.PARTS
MOVED = ((1000, 0.3), (1000, 0.5), (2000, 0.3), (2000, 0.5))
MEDIANS = (500, 1000, 2000)
BLOCK = 50


def trailing_share(high: np.ndarray, width: int) -> np.ndarray:
    """Per row, the share of the ``width`` rows up to it (rows before the series count as not
    high) where ``high``."""
    sums = np.cumsum(np.r_[0.0, high])
    ends = np.arange(1, len(high) + 1)
    return (sums[ends] - sums[np.maximum(0, ends - width)]) / width


def trailing_median(z: np.ndarray, width: int) -> np.ndarray:
    """Per 50-row block, the median of the ``width`` rows before it (0 until ``width / 2``)."""
    out = np.zeros(len(z))
    for start in range(BLOCK * -(-(width // 2) // BLOCK), len(z), BLOCK):
        out[start : start + BLOCK] = np.median(z[max(0, start - width) : start])
    return out


def scores(z: dict, z_train: dict, weights: dict, labels: np.ndarray, first: np.ndarray) -> dict:
    from madcluster.metrics.tsbad import tsbad_vus

    excess = {p: weights[p] * np.maximum(z[p], 0.0) for p in PARTS}
    totals = {"default": sum(excess.values())}
    for width, phi in MOVED:
        totals[f"moved W {width}, phi {phi}"] = sum(
            excess[p]
            * np.clip(
                (1.0 - trailing_share(z[p] > np.quantile(z_train[p], 0.99), width)) / (1.0 - phi),
                0.0,
                1.0,
            )
            for p in PARTS
        )
    for width in MEDIANS:
        totals[f"trailing median W {width}"] = sum(
            weights[p] * np.maximum(z[p] - np.maximum(trailing_median(z[p], width), 0.0), 0.0)
            for p in PARTS
        )
    return {k: tsbad_vus(v, labels, first)[1] for k, v in totals.items()}


if __name__ == "__main__":
    lib.cap_tables(scores, __doc__)  # agreement_cap.py's tables, these rules
