"""Issue 36 item 4 after issue 34: the at-once score with each part over its spread so far.

The final score divides each part's contribution by its series scale (the spread of its z-scores
on the scored series' first ``series_scale_rows`` steps, :func:`~madcluster.score.combination.series_scale`);
the at-once score reads the training scales alone. A stream can also read a causal series scale:
at step t, the spread of the part's at-once z-scores on the steps so far (at most the first N),
refreshed every ``--every`` steps. This compares, per development family, the at-once score with
the training scales, with that causal scale, and (a bound no stream has before step N) with the
scale of the first N at-once steps fixed from step 0; VUS-PR under TSB-AD's protocol, no label read.

    python benchmarks/studies/at_once_scales.py --bundle /tmp/dev_bundle.npz \\
        --at-once /tmp/at_once_cache
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

OWN_WIDTH, AR_WIDTH = 25, 5  # the default's at-once trailing means (the centred ones cut at t)


def at_once_z(readings: dict, weights: dict[str, float]) -> dict[str, np.ndarray]:
    """Each causal part's weighted z-score at once, with its training statistics."""
    from madcluster.score.smoothing import trailing_means

    out = {}
    for name, weight in weights.items():
        if weight == 0.0 or name not in readings or name in ("discord", "final"):
            continue  # the discord part has no causal reading in the default
        test, train = readings[name]
        width = {"own": OWN_WIDTH, "ar": AR_WIDTH}.get(name, 1)
        if width > 1:
            test, train = trailing_means(test, width), trailing_means(train, width)
        std = train.std() if train.std() > 1e-12 else 1.0
        out[name] = weight * (test - train.mean()) / std
    return out


def causal_scales(z: np.ndarray, rows: int, every: int, first: int) -> np.ndarray:
    """Per step, the series scale of ``z`` on the steps so far (at most the first ``rows``),
    refreshed every ``every`` steps; 1 before ``first`` steps."""
    from madcluster.score.combination import series_scale

    scales = np.ones(len(z))
    for t in range(first, len(z), every):
        scales[t : t + every] = series_scale(z[: min(t + 1, rows)])
    return scales


def record_reading(
    row: dict, server_roc: dict, variant: str, score: np.ndarray, arrays: dict
) -> None:
    """``score``'s VUS-PR into ``row[variant]`` and, on the server family (the issue's at-once bar:
    a ROC-AUC near the final score's), its ROC-AUC into ``server_roc[variant]``."""
    from sklearn.metrics import roc_auc_score

    from madcluster.metrics.tsbad import tsbad_vus

    labels, first = np.asarray(arrays["labels"]), np.asarray(arrays["test"])[:, 0]
    row[variant] = tsbad_vus(score, labels, first)[1]
    if str(arrays["family"]) == "server":
        server_roc.setdefault(variant, []).append(roc_auc_score(labels, score))


def print_server_roc(server_roc: dict) -> None:
    """The mean ROC-AUC of each variant on the server family."""
    print("\nROC-AUC on the server family, at once:")
    for variant, values in server_roc.items():
        print(f"- {variant}: {np.mean(values):.3f}")


def main() -> None:
    from network_parts import family_table, read_bundle, study_arguments
    from which_model import series_weights

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
