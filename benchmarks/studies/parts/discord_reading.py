"""Which per-step reading of the discord part: the subsequence centred on a step, or the least
distant of the subsequences covering it (issue 34 item 5: alerts where the anomaly is).

Why: a centred subsequence of the period's length m covers an anomaly for m / 2 rows on each side,
so the normal rows around an anomaly score as high as the anomaly (false alarms next to it); of the
subsequences covering a normal row near an anomaly, some miss the anomaly, while every one covering
an anomalous row contains it. Reads ``part_study.py``'s caches and refits the discord part.

    python benchmarks/studies/parts/discord_reading.py --bundle /tmp/dev_bundle.npz --cache /tmp/part_cache
"""

from __future__ import annotations

import argparse
import pickle
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/: benchlib
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/studies/: lib

WEIGHTS_TRIED = (0.5, 1.0, 1.5)


def covering_minimum(distances: np.ndarray, n: int, m: int) -> np.ndarray:
    """Per step, the least distance of the subsequences (of length m) covering it."""
    padded = np.concatenate([np.full(m - 1, np.inf), distances, np.full(m - 1, np.inf)])
    view = np.lib.stride_tricks.sliding_window_view(padded, m)[:n]
    return view.min(axis=1)


def main() -> None:
    from lib import alert_spread, default_rows, read_bundle, zscore

    from madcluster.metrics.tsbad import tsbad_vus
    from madcluster.score.discord import Discord
    from madcluster.score.parts import FitContext

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", required=True)
    parser.add_argument("--cache", required=True)
    args = parser.parse_args()
    bundle = read_bundle(args.bundle)
    weights = {"own": 0.5, "kmeans": 1.5, "ar": 1.0, "discord": 1.0}
    rows: dict[str, dict[str, tuple[float, float, float]]] = {}
    families = {}
    for i, (name, arrays) in enumerate(sorted(bundle.items()), 1):
        parts = pickle.loads((Path(args.cache) / f"{name}.pkl").read_bytes())
        saved = Path(args.cache) / f"{name}.discord_readings.pkl"
        if saved.exists():
            readings = pickle.loads(saved.read_bytes())
        else:
            train = default_rows(arrays["train"], arrays["train"]).astype(np.float32)
            test = default_rows(arrays["train"], arrays["test"])
            part = Discord.fit(train, FitContext(100, 0))
            m = part.length
            readings = {}
            for label, rows_ in (("test", test), ("train", train)):
                read = part.read(rows_)
                starts = np.arange(len(read) - m + 1)
                d = part.distances(read, starts, exclude_near=(label == "train"))
                n = len(read)
                readings[label] = (d[np.clip(np.arange(n) - m // 2, 0, n - m)], covering_minimum(d, n, m))
            saved.write_bytes(pickle.dumps(readings))
        labels, first = arrays["labels"], np.asarray(arrays["test"])[:, 0]
        out = {}
        for k, reading in enumerate(("centred", "covering-min")):
            for weight in WEIGHTS_TRIED:
                variant = dict(parts, discord=(readings["test"][k], readings["train"][k]))
                w = dict(weights, discord=weight)
                total = sum(np.maximum(w[p] * zscore(*variant[p]), 0.0) for p in w)
                precision, smear = alert_spread(total, labels)
                alone = tsbad_vus(variant["discord"][0], labels, first)[1]
                out[f"{reading}, w {weight:g}"] = (tsbad_vus(total, labels, first)[1], precision, smear, alone)
        rows[name], families[name] = out, str(arrays["family"])
        print(f"[{i}/{len(bundle)}] {name}", file=sys.stderr, flush=True)
    fams = sorted(set(families.values()))
    print("| discord reading | measure | " + " | ".join(fams) + " | 46 TSB-AD |")
    print("|---|---|" + "---|" * (len(fams) + 1))
    for reading in next(iter(rows.values())):
        for j, measure in enumerate(("default VUS-PR", "precision@k", "smear", "discord alone VUS-PR")):
            cells = [np.nanmean([rows[s][reading][j] for s in rows if families[s] == f]) for f in fams]
            dev = np.nanmean([rows[s][reading][j] for s in rows if families[s].startswith("tsbad")])
            print(f"| {reading} | {measure} | " + " | ".join(f"{c:.3f}" for c in cells) + f" | {dev:.3f} |")


if __name__ == "__main__":
    main()
