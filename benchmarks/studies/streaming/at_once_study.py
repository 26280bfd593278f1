"""Issue 36 item 4: the score a stream answers at once, per development family, against the final one.

A stream answers each row at once with every part read causally (steps <= t) and again, final,
when the parts that read ahead have their rows. This reads, per development series, each part's
causal reading as the default takes it (own and ar: the trailing part of their centred means;
kmeans: the window ending at t; discord: the subsequence ending at t), standardised with the
training statistics of that reading, combined by the default's rule and weights, and compares
variants of the point-wise parts' trailing widths (the one lever that does not touch the final
score). VUS-PR under TSB-AD's protocol; no test label is read by any variant.

    python benchmarks/studies/streaming/at_once_study.py --bundle /tmp/dev_bundle.npz --net /tmp/net \\
        --cache /tmp/at_once_cache --json /tmp/at_once.json
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/: benchlib
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/studies/: lib
from lib import at_once_score

WINDOW = 100
OWN_WIDTHS = (1, 5, 10, 25, 50)  # 25 = today's (the trailing half of a centred mean of 50)
AR_WIDTHS = (1, 3, 5, 10)  # 5 = today's (the trailing half of a centred mean of 10)


def causal_readings(arrays: dict[str, np.ndarray], net: dict[str, np.ndarray]) -> dict:
    """Raw causal readings on test and training rows: own and ar before any mean; kmeans and
    discord as their streams answer at once."""
    from lib import default_rows

    from madcluster.score.autoregressive import AutoRegressive
    from madcluster.score.discord import Discord
    from madcluster.score.parts import FitContext
    from madcluster.score.window_kmeans import WindowKMeans

    test = default_rows(arrays["train"], arrays["test"])
    train = default_rows(arrays["train"], arrays["train"])
    context = FitContext(WINDOW, 0)
    kmeans = WindowKMeans.fit(train.astype(np.float32), context)
    ar = AutoRegressive.fit(train.astype(np.float32), context)
    discord = Discord.fit(train.astype(np.float32), context)
    return {
        "own": (net["net_test"].astype(np.float64), net["net_train"].astype(np.float64)),
        "ar": (ar.values(test), ar.values(train)),
        "kmeans": (kmeans.at_once(test), kmeans.at_once(train)),
        "discord": (discord.at_once(test), discord.reference_at_once(train)),
        "final": net["default_test"].astype(np.float64),
    }


def main() -> None:
    from lib import family_table, open_series

    from madcluster.metrics.tsbad import tsbad_vus

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", required=True)
    parser.add_argument("--net", required=True)
    parser.add_argument("--cache", default=None)
    parser.add_argument("--json", required=True)
    parser.add_argument("--series", nargs="*", default=None)
    args = parser.parse_args()
    bundle, cache = open_series(args.bundle, args.series, args.cache)
    table, families = {}, {}
    for i, (name, arrays) in enumerate(sorted(bundle.items()), 1):
        cached = cache / f"{name}.pkl" if cache else None
        if cached and cached.exists():
            readings = pickle.loads(cached.read_bytes())
        else:
            with np.load(Path(args.net) / f"{name}.npz") as net:
                readings = causal_readings(arrays, dict(net))
            if cached:
                cached.write_bytes(pickle.dumps(readings))
        labels, first = arrays["labels"], np.asarray(arrays["test"])[:, 0]
        row = {"final (old default)": tsbad_vus(readings["final"], labels, first)[1]}
        for ow in OWN_WIDTHS:
            for aw in AR_WIDTHS:
                row[f"own {ow}, ar {aw}"] = tsbad_vus(at_once_score(readings, ow, aw), labels, first)[1]
        row["own 25, ar 5, no discord"] = tsbad_vus(at_once_score(readings, 25, 5, False), labels, first)[1]
        table[name], families[name] = row, str(arrays["family"])
        print(f"[{i}/{len(bundle)}] {name}", file=sys.stderr, flush=True)
    Path(args.json).write_text(json.dumps({"vus_pr": table, "family": families}))
    print(family_table(table, families, "reading"))


if __name__ == "__main__":
    main()
