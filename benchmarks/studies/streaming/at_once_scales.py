"""Issue 36 item 4 after issue 34: the at-once score with each part over its spread so far.

The final score divides each part's contribution by its series scale (the spread of its z-scores
on the scored series' first ``series_scale_rows`` steps, :func:`~madcluster.score.combination.series_scale`);
the at-once score reads the training scales alone. A stream can also read a causal series scale:
at step t, the spread of the part's at-once z-scores on the steps so far (at most the first N),
refreshed every ``--every`` steps. This compares, per development family, the at-once score with
the training scales, with that causal scale, and (a bound no stream has before step N) with the
scale of the first N at-once steps fixed from step 0; VUS-PR under TSB-AD's protocol, no label read.

    python benchmarks/studies/streaming/at_once_scales.py --bundle /tmp/dev_bundle.npz \\
        --at-once /tmp/at_once_cache
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/: benchlib
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/studies/: lib
from lib import at_once_z


def causal_scales(z: np.ndarray, rows: int, every: int, first: int) -> np.ndarray:
    """Per step, the series scale of ``z`` on the steps so far (at most the first ``rows``),
    refreshed every ``every`` steps; 1 before ``first`` steps."""
    from madcluster.score.combination import series_scale

    scales = np.ones(len(z))
    for t in range(first, len(z), every):
        scales[t : t + every] = series_scale(z[: min(t + 1, rows)])
    return scales


def main() -> None:
    from lib import family_table, read_bundle, series_weights, study_arguments

    from madcluster.metrics.tsbad import tsbad_vus
    from madcluster.score.combination import SERIES_SCALE_ROWS, series_scale

    args = study_arguments(__doc__, at_once="at_once_study.py cache")
    rows, families = {}, {}
    for name, arrays in sorted(read_bundle(args.bundle).items()):
        causal = pickle.loads((Path(args.at_once) / f"{name}.pkl").read_bytes())
        labels, first = arrays["labels"], np.asarray(arrays["test"])[:, 0]
        z = at_once_z(causal, series_weights(arrays["train"]))
        # z is weighted; the scale is of the unweighted z-score (a weight does not change it)
        weights = series_weights(arrays["train"])
        plain = {p: v / weights[p] for p, v in z.items()}
        row = {"at once, training scales (today)": sum(np.maximum(v, 0) for v in z.values())}
        for every, start in ((100, 100), (25, 100), (100, 500)):
            row[f"at once, scales so far (every {every}, from step {start})"] = sum(
                np.maximum(z[p], 0) / causal_scales(plain[p], SERIES_SCALE_ROWS, every, start)
                for p in z
            )
        row["at once, first 3,000 steps' scales from step 0 (bound)"] = sum(
            np.maximum(z[p], 0) / series_scale(plain[p][:SERIES_SCALE_ROWS]) for p in z
        )
        rows[name] = {k: tsbad_vus(v, labels, first)[1] for k, v in row.items()}
        families[name] = str(arrays["family"])
        print(name, file=sys.stderr, flush=True)
    print(family_table(rows, families, "at-once score"))


if __name__ == "__main__":
    main()
