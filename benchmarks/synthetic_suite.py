"""ROC-AUC by anomaly kind on the synthetic development suite, for named detector variants.

    python benchmarks/synthetic_suite.py --variants default paper pca kmeans --bases sines random-walk seasonal
    python benchmarks/synthetic_suite.py --variants default --set epochs=5 --json out.json

Each variant is a dict of ``MADCluster`` parameters (or a baseline); ``--set k=v`` overrides a
parameter of every MADCluster variant. One torch thread, fixed seeds: the same command gives the
same numbers. This suite plus MSL is the development set on which the defaults were chosen.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
import torch
from benchlib import parse_overrides, write_record

from madcluster import KMeansDetector, MADCluster, PCADetector
from madcluster.data.synthetic import BASE_SIGNALS, make_anomaly_suite, roc_auc_by_kind

WINDOW = 100

# The ablation ladder of the core-quality issue: each row adds one change to the previous.
VARIANTS: dict[str, dict] = {
    "paper": {"preset": "paper"},
    "default": {"preset": "default"},
}


def build(variant: str, overrides: dict, seed: int):
    if variant == "pca":
        return PCADetector(window_size=WINDOW)
    if variant == "kmeans":
        return KMeansDetector(window_size=WINDOW)
    params = dict(VARIANTS[variant]) if variant in VARIANTS else json.loads(variant)
    preset = params.pop("preset", "default")
    params.update(overrides)
    return MADCluster.from_preset(preset, window_size=WINDOW, random_state=seed, **params)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variants", nargs="+", default=["default", "paper", "pca", "kmeans"],
                        help="names in VARIANTS, pca, kmeans, or a JSON dict of MADCluster parameters")
    parser.add_argument("--bases", nargs="+", default=list(BASE_SIGNALS), choices=BASE_SIGNALS)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0], help="data and model seeds")
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE", help="override a MADCluster parameter")
    parser.add_argument("--json", help="write all results here")
    args = parser.parse_args()
    torch.set_num_threads(1)
    overrides = parse_overrides(args.set)
    rows = []
    for variant in args.variants:
        for base in args.bases:
            for seed in args.seeds:
                data = make_anomaly_suite(base, seed=seed)
                t0 = time.perf_counter()
                det = build(variant, overrides, seed).fit(data.train)
                scores = det.decision_function(data.test)
                aucs = roc_auc_by_kind(scores, data.kinds, data.kind_names)
                rows.append({"variant": variant, "base": base, "seed": seed, "seconds": time.perf_counter() - t0, **aucs})
                print(json.dumps(rows[-1]), flush=True)
    kinds = [k for k in rows[0] if k not in ("variant", "base", "seed", "seconds")]
    print("\n| variant | " + " | ".join(kinds) + " | min kind | s |")
    print("|---" * (len(kinds) + 3) + "|")
    for variant in args.variants:
        sel = [r for r in rows if r["variant"] == variant]
        means = [np.mean([r[k] for r in sel]) for k in kinds]
        worst = min(min(r[k] for k in kinds if k != "all") for r in sel)
        print(f"| {variant} | " + " | ".join(f"{m:.3f}" for m in means) + f" | {worst:.3f} | {np.mean([r['seconds'] for r in sel]):.0f} |")
    if args.json:
        configs = {v: {**(dict(VARIANTS[v]) if v in VARIANTS else json.loads(v)), "window_size": WINDOW, **overrides}
                   for v in args.variants if v not in ("pca", "kmeans")}
        write_record(args.json, {"command": "python benchmarks/synthetic_suite.py " + " ".join(sys.argv[1:]),
                                 "rows": rows}, configs=configs, indent=1)


if __name__ == "__main__":
    main()
