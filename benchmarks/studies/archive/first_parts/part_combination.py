"""Compare rules that combine the default score's parts (no test labels in any rule), on the 46 TSB-AD series.

Reads ``benchmarks/studies/archive/first_parts/part_scores.py``'s dumps (the network part on test and training rows), refits
the cheap input-space parts on the training rows exactly as the default does (on checked rows:
constant training columns as their steps), and scores each combination rule's test scores with
TSB-AD's VUS-PR. Rules: each part alone, equal sums of z-scores (the default's rule), and sums /
maxima of each part's tail surprise under its training distribution
(``benchmarks/studies/lib.py``).

    python benchmarks/studies/archive/first_parts/part_combination.py --dumps /tmp/parts --data-dir ../shared/datasets
"""

from __future__ import annotations

import argparse
import pickle
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # benchmarks/: benchlib
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/studies/: lib
from benchlib import print_source_table
from lib import series_parts


def main() -> None:
    from functools import partial

    from benchlib import add_series_arguments, load_series
    from lib import GRID, RULES, SMOOTHING

    from madcluster.metrics.tsbad import tsbad_vus

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dumps", required=True)
    add_series_arguments(parser)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--parts", nargs="+", default=["kmeans", "ar"])
    parser.add_argument("--cache", default=None)
    parser.add_argument("--grid", action="store_true", help="the weight grid instead of the rules")
    parser.add_argument("--smoothing", action="store_true", help="the smoothing grid (part_rules.SMOOTHING) instead of the rules")
    parser.add_argument("--source", choices=["tsbad", "suite", "demo"], default="tsbad",
                        help="suite / demo: dumps holding their rows, scored by ROC-AUC over all steps")
    args = parser.parse_args()
    cache_path = Path(args.cache) if args.cache else None
    cache = pickle.loads(cache_path.read_bytes()) if cache_path and cache_path.exists() else {}
    names = tuple(args.parts)
    results: dict[str, dict[str, list[float]]] = {}
    RULES = SMOOTHING if args.smoothing else GRID if args.grid else RULES
    if args.source != "tsbad":
        from types import SimpleNamespace

        from sklearn.metrics import roc_auc_score

        window = 50 if args.source == "demo" else 100
        for path in sorted(Path(args.dumps).glob("*.npz")):
            dump = dict(np.load(path))
            series = SimpleNamespace(train=dump["train"], test=dump["test"])
            parts = series_parts(series, dump, args.seed, names, window)
            for rule, combine in RULES.items():
                combine = partial(combine, window=window) if args.smoothing else combine
                for label, score in combine(parts).items():
                    results.setdefault(f"{rule}: {label}", {}).setdefault(path.stem, []).append(
                        roc_auc_score(dump["labels"], score))
        columns = sorted({c for per in results.values() for c in per})
        print(f"| rule | {' | '.join(columns)} | mean |\n|---|{'---|' * len(columns)}---|")
        for rule, per in results.items():
            print(f"| {rule} | {' | '.join(f'{per[c][0]:.3f}' for c in columns)} | {np.mean([per[c][0] for c in columns]):.3f} |")
        return
    for source, _, series in load_series(args):
        path = Path(args.dumps) / f"{series.name}.npz"
        if not path.exists():
            continue
        if series.name not in cache or not set(names) <= set(cache[series.name]):
            cache[series.name] = {**cache.get(series.name, {}), **series_parts(series, dict(np.load(path)), args.seed, names)}
            if cache_path:
                cache_path.write_bytes(pickle.dumps(cache))
        parts = {k: v for k, v in cache[series.name].items() if k in ("net", *names)}
        for rule, combine in RULES.items():
            for label, score in combine(parts).items():
                vus = tsbad_vus(score, series.labels, series.test)[1]
                results.setdefault(f"{rule}: {label}", {}).setdefault(source, []).append(vus)
    print_source_table(results, counts=True)


if __name__ == "__main__":
    main()
