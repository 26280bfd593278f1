"""The discord part's causal reading at weight 0, 0.5 and 1 in the score a stream answers at once.

Reads ``at_once_study.py``'s cache (own 25 and ar 5: today's trailing widths).

    python benchmarks/studies/streaming/at_once_discord.py --bundle /tmp/dev_bundle.npz --cache /tmp/at_once_cache
"""

from __future__ import annotations

import argparse
import pickle
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/: benchlib
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/studies/: lib


def trailing_min(values: np.ndarray, k: int) -> np.ndarray:
    padded = np.concatenate([np.full(k - 1, values[0]), values])
    return np.lib.stride_tricks.sliding_window_view(padded, k).min(axis=1)


def main() -> None:
    import lib
    from lib import family_table, read_bundle

    from madcluster.metrics.tsbad import tsbad_vus

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", required=True)
    parser.add_argument("--cache", required=True)
    args = parser.parse_args()
    base = dict(lib.WEIGHTS)
    results, families = {}, {}
    for name, arrays in sorted(read_bundle(args.bundle).items()):
        readings = pickle.loads((Path(args.cache) / f"{name}.pkl").read_bytes())
        labels, first = arrays["labels"], np.asarray(arrays["test"])[:, 0]
        out = {}
        for weight in (0.0, 0.5, 1.0):
            lib.WEIGHTS = dict(base, discord=weight)
            score = lib.at_once_score(readings, 25, 5, weight > 0)
            out[f"trailing subsequence, w {weight:g}"] = tsbad_vus(score, labels, first)[1]
        for k in (5, 20):
            test, train = readings["discord"]
            variant = dict(readings, discord=(trailing_min(test, k), trailing_min(train, k)))
            lib.WEIGHTS = dict(base, discord=0.5)
            score = lib.at_once_score(variant, 25, 5, True)
            out[f"min of last {k} ends, w 0.5"] = tsbad_vus(score, labels, first)[1]
        results[name], families[name] = out, str(arrays["family"])
    print(family_table(results, families, "discord at once"))


if __name__ == "__main__":
    main()
