"""Which model to serve (issue 37 item 13): per development family, the default's final and at-once
scores against ``--preset streaming`` (the network alone, final at once).

Reads the caches of ``part_study.py`` (the parts, smoothed as the default reads them),
``part_weights.py`` (the discord part as the default reads it) and ``at_once_study.py`` (the
causal readings). ``--preset streaming`` is the default's network without input terms: input terms
do not enter training, so it is the own part of the same fit, warm-up calibrated, unsmoothed.

    python benchmarks/studies/streaming/which_model.py --bundle /tmp/dev_bundle.npz \\
        --parts /tmp/part_cache --at-once /tmp/at_once_cache
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/: benchlib
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/studies/: lib
from lib import series_weights


def final_score(parts: dict, discord: tuple[np.ndarray, np.ndarray], weights: dict) -> np.ndarray:
    from lib import zscore

    readings = dict(parts, discord=discord)
    return sum(np.maximum(w * zscore(*readings[p]), 0.0) for p, w in weights.items())


def main() -> None:
    import lib
    from lib import discord_reading, family_table, read_bundle, study_arguments

    from madcluster.metrics.tsbad import tsbad_vus

    args = study_arguments(
        __doc__, parts="part_study.py's cache folder", at_once="at_once_study.py cache"
    )
    rows, families = {}, {}
    for name, arrays in sorted(read_bundle(args.bundle).items()):
        parts = pickle.loads((Path(args.parts) / f"{name}.pkl").read_bytes())
        causal = pickle.loads((Path(args.at_once) / f"{name}.pkl").read_bytes())
        labels, first = arrays["labels"], np.asarray(arrays["test"])[:, 0]
        covering = discord_reading(name, arrays, Path(args.parts))  # as the default reads it
        weights = series_weights(arrays["train"])
        lib.WEIGHTS = dict(weights, discord=0.0)  # the discord part has no causal reading
        final = final_score(parts, covering, weights)
        rows[name] = {
            "the default, final (L rows later)": tsbad_vus(final, labels, first)[1],
            "the default, at once": tsbad_vus(
                lib.at_once_score(causal, 25, 5, False), labels, first
            )[1],
            "`--preset streaming` (final at once)": tsbad_vus(causal["own"][0], labels, first)[1],
        }
        families[name] = str(arrays["family"])
    print(family_table(rows, families, "score"))


if __name__ == "__main__":
    main()
