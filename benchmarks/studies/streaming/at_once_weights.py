"""Issue 36 item 4: the at-once score with other weights than the final score's.

The default weighs the parts' causal readings as it weighs their final ones (weights from the
training columns). The causal readings rank differently (the next-step part read through a
trailing mean of 5 steps is weak on server metrics), so this reweighs them: VUS-PR per development
family and ROC-AUC on the server-metrics family (the issue's at-once bar); no label is read by any
variant.

    python benchmarks/studies/streaming/at_once_weights.py --bundle /tmp/dev_bundle.npz \\
        --at-once /tmp/at_once_cache
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/: benchlib
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/studies/: lib

VARIANTS = {
    "today (the final score's weights)": {},
    "ar x0.5": {"ar": 0.5},
    "ar x0": {"ar": 0.0},
    "own x2": {"own": 2.0},
    "own x2, ar x0.5": {"own": 2.0, "ar": 0.5},
    "own x3, ar x0.5": {"own": 3.0, "ar": 0.5},
}


def main() -> None:
    from lib import (
        at_once_z,
        family_table,
        print_server_roc,
        read_bundle,
        record_reading,
        series_weights,
        study_arguments,
    )

    args = study_arguments(__doc__, at_once="at_once_study.py cache")
    rows, families, server_roc = {}, {}, {}
    for name, arrays in sorted(read_bundle(args.bundle).items()):
        causal = pickle.loads((Path(args.at_once) / f"{name}.pkl").read_bytes())
        weights = series_weights(arrays["train"])
        row = {}
        for variant, factors in VARIANTS.items():
            scaled = {p: w * factors.get(p, 1.0) for p, w in weights.items()}
            score = sum(np.maximum(z, 0.0) for z in at_once_z(causal, scaled).values())
            record_reading(row, server_roc, variant, score, arrays)
        rows[name], families[name] = row, str(arrays["family"])
    print(family_table(rows, families, "at-once weights"))
    print_server_roc(server_roc)


if __name__ == "__main__":
    main()
