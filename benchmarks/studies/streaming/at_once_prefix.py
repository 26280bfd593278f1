"""Issue 36 item 4: a causal reading of the KMeans part that forecasts its final value.

A step's final KMeans value is the mean distance of the grid windows covering it, most of which end
after it; at once the default reads the one window *ending* at t, in which a new anomaly is one row
of L. Here the windows that will cover t are read as far as they go: each grid window starting in
``[t - L + 1, t]`` is matched on its observed prefix ``[s, t]`` (m rows) to the nearest centroid's
first m rows, its squared distance scaled to a whole window (x L / m), and the at-once value is
the mean of those distances over the windows (``prefix mean``) or the pooled squared error over
all their observed rows (``prefix pooled``). That is the final value with the rows to come
assumed as typical as the rows seen. Standardised with the same reading of the training rows;
combined with the other parts' causal readings as the default combines them at once. VUS-PR per
development family; no label read.

    python benchmarks/studies/streaming/at_once_prefix.py --bundle /tmp/dev_bundle.npz \\
        --at-once /tmp/at_once_cache
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/: benchlib
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/studies/: lib

WINDOW = 100


def prefix_errors(part, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each grid window start s (every stride from -(L - stride), so every step has L / stride
    windows starting in [t - L + 1, t]; rows before 0 are the first row repeated) and each prefix
    length m = 1..L: the least squared error over the centroids of its first m rows
    (:func:`madcluster.score.kmeans_prefix.prefix_errors`, the default's reading),
    ``errors [n_windows, L]``, and the starts."""
    from madcluster.score.kmeans_prefix import prefix_errors as least_prefix_errors

    read = part.read(rows)
    scaled = (np.asarray(read, dtype=np.float64) - part.scaler_mean) / part.scaler_scale
    pad = WINDOW
    scaled = np.vstack([np.repeat(scaled[:1], pad, axis=0), scaled, np.repeat(scaled[-1:], pad, axis=0)])
    starts = np.arange(-WINDOW + part.stride, len(read), part.stride)
    errors = np.empty((len(starts), WINDOW))
    for lo in range(0, len(starts), 256):
        chunk = starts[lo : lo + 256] + pad
        errors[lo : lo + len(chunk)] = least_prefix_errors(part, scaled[chunk[:, None] + np.arange(WINDOW)])
    return errors, starts


def prefix_readings(part, rows: np.ndarray) -> dict[str, np.ndarray]:
    """Per step t: the ``prefix mean`` and ``prefix pooled`` readings (module docstring)."""
    errors, starts = prefix_errors(part, rows)
    n = len(rows)
    mean, pooled_err, pooled_len, count = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
    for i, s in enumerate(starts):
        steps = np.arange(max(s, 0), min(s + WINDOW, n))  # the steps this window covers
        m = steps - s + 1  # its observed prefix at each of them
        err = errors[i, m - 1]
        mean[steps] += np.sqrt(err * WINDOW / m)
        pooled_err[steps] += err
        pooled_len[steps] += m
        count[steps] += 1
    return {
        "prefix mean": mean / np.maximum(count, 1),
        "prefix pooled": np.sqrt(pooled_err / np.maximum(pooled_len, 1) * WINDOW),
    }


def main() -> None:
    from lib import (
        at_once_z,
        default_rows,
        family_table,
        print_server_roc,
        read_bundle,
        record_reading,
        series_weights,
        study_arguments,
    )

    from madcluster.metrics.tsbad import tsbad_vus
    from madcluster.score.parts import FitContext
    from madcluster.score.window_kmeans import WindowKMeans

    args = study_arguments(__doc__, at_once="at_once_study.py cache")
    rows, families, server_roc = {}, {}, {}
    for name, arrays in sorted(read_bundle(args.bundle).items()):
        causal = pickle.loads((Path(args.at_once) / f"{name}.pkl").read_bytes())
        train = default_rows(arrays["train"], arrays["train"])
        test = default_rows(arrays["train"], arrays["test"])
        part = WindowKMeans.fit(train.astype(np.float32), FitContext(WINDOW, 0))
        weights = series_weights(arrays["train"])
        labels, first = np.asarray(arrays["labels"]), np.asarray(arrays["test"])[:, 0]
        on_test, on_train = prefix_readings(part, test), prefix_readings(part, train)
        row = {}
        variants = {"window ending at t (the default)": causal}
        for reading in on_test:
            variants[f"{reading}"] = dict(causal, kmeans=(on_test[reading], on_train[reading]))
        for variant, readings in variants.items():
            score = sum(np.maximum(z, 0.0) for z in at_once_z(readings, weights).values())
            record_reading(row, server_roc, variant, score, arrays)
        for reading in on_test:  # the part alone
            row[f"kmeans part alone, {reading}"] = tsbad_vus(on_test[reading], labels, first)[1]
        row["kmeans part alone, window ending at t"] = tsbad_vus(causal["kmeans"][0], labels, first)[1]
        rows[name], families[name] = row, str(arrays["family"])
        print(name, {k: round(v, 3) for k, v in row.items()}, file=sys.stderr, flush=True)
    print(family_table(rows, families, "at-once KMeans reading"))
    print_server_roc(server_roc)


if __name__ == "__main__":
    main()
