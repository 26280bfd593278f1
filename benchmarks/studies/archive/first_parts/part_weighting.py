"""Compare rules that weigh the default score's parts from training data alone, on the 46 TSB-AD series.

Reads ``benchmarks/studies/archive/first_parts/part_scores.py``'s dumps (the network part), refits the cheap parts, and for
each series computes (1) every part and every equal-weight combination of parts on the test rows,
scored with TSB-AD's VUS-PR, and (2) the same combinations on the injected training tails, scored
by average precision against the injection labels. A rule maps (2) to a choice; its row in the
table is the mean test VUS-PR of what it chose. Test labels are used only to score, never to choose
(except the ``oracle`` row, labelled so).

    python benchmarks/studies/archive/first_parts/part_weighting.py --dumps /tmp/parts --data-dir ../shared/datasets
"""

from __future__ import annotations

import argparse
import itertools
import pickle
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # benchmarks/: benchlib
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/studies/: lib
from benchlib import print_source_table


def zscore(values: np.ndarray, reference: np.ndarray) -> np.ndarray:
    std = reference.std()
    return (values - reference.mean()) / (std if std > 1e-12 else 1.0)


def average_precision(scores: np.ndarray, labels: np.ndarray) -> float:
    order = np.argsort(-scores, kind="stable")
    hits = labels[order].astype(np.float64)
    if hits.sum() == 0:
        return float("nan")
    precision = np.cumsum(hits) / np.arange(1, len(hits) + 1)
    return float((precision * hits).sum() / hits.sum())


def series_parts(series, dump: dict, seed: int, names: tuple[str, ...]) -> dict:
    """Test parts and validation parts of one series (z-scored as the default does)."""
    from lib import default_rows, fit_parts, injected_variants, tail_start

    train = np.asarray(series.train, dtype=np.float64)
    test = default_rows(train, series.test)
    window = 100
    full = fit_parts(names, train, window, seed)
    test_parts = {"net": dump["net_test"].astype(np.float64)}
    for name, part in full.items():
        test_parts[name] = zscore(part.scores(test), part.reference_scores(train))
    start = tail_start(len(train), window)
    head = fit_parts(names, train[:start], window, seed)
    variants = injected_variants(train, window, len(dump["net_var"]), seed)
    val = []
    for v, (rows, labels) in enumerate(variants):
        parts = {"net": dump["net_var"][v].astype(np.float64)[start:]}
        for name, part in head.items():
            parts[name] = zscore(part.scores(rows), part.reference_scores(train[:start]))[start:]
        val.append((parts, labels[start:]))
    return {"test": test_parts, "val": val, "labels": np.asarray(series.labels), "rows": np.asarray(series.test)}


def combos(parts: list[str]) -> list[tuple[str, ...]]:
    return [c for r in range(1, len(parts) + 1) for c in itertools.combinations(parts, r)]


def main() -> None:
    from benchlib import add_series_arguments, load_series

    from madcluster.metrics.tsbad import tsbad_vus

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dumps", required=True)
    add_series_arguments(parser)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--parts", nargs="+", default=["kmeans", "ar", "kmeans_causal"])
    parser.add_argument("--cache", default=None)
    args = parser.parse_args()
    dumps = Path(args.dumps)
    cache_path = Path(args.cache) if args.cache else None
    cache = pickle.loads(cache_path.read_bytes()) if cache_path and cache_path.exists() else {}
    names = tuple(args.parts)
    rows = {}
    for source, _, series in load_series(args):
        path = dumps / f"{series.name}.npz"
        if not path.exists():
            continue
        key = (series.name, names)
        if key not in cache:
            dump = dict(np.load(path))
            info = series_parts(series, dump, args.seed, names)
            window_len = None
            test_vus = {}
            for combo in combos(["net", *names]):
                score = sum(info["test"][p] for p in combo)
                test_vus[combo] = tsbad_vus(score, info["labels"], info["rows"])[1]
            val_ap = {}
            for combo in combos(["net", *names]):
                val_ap[combo] = [average_precision(sum(parts[p] for p in combo), labels) for parts, labels in info["val"]
                                 if labels.any()]
            default_vus = tsbad_vus(dump["default_test"], info["labels"], info["rows"])[1]
            cache[key] = {"source": source, "test_vus": test_vus, "val_ap": val_ap, "default": default_vus, "window": window_len}
            if cache_path:
                cache_path.write_bytes(pickle.dumps(cache))
            print(f"{series.name}: default {default_vus:.3f}", flush=True)
        rows[series.name] = cache[key]
    report(rows, names)


def report(rows: dict, names: tuple[str, ...]) -> None:
    all_combos = combos(["net", *names])
    rules = {
        "default (dump)": lambda r: r["default"],
        "oracle best combo (test labels)": lambda r: max(r["test_vus"].values()),
    }
    for combo in all_combos:
        rules["+".join(combo)] = lambda r, c=combo: r["test_vus"][c]

    def pick(r, candidates, margin=0.0, anchor=None):
        scores = {c: np.nanmean(r["val_ap"][c]) for c in candidates}
        best = max(scores, key=scores.get)
        if anchor is not None and scores[best] < scores[anchor] + margin:
            best = anchor
        return r["test_vus"][best]

    def pick_consistent(r, candidates, anchor, wins):
        """The candidate beating ``anchor`` on at least ``wins`` of the variants (most such wins,
        then the best mean AP); the anchor when none does."""
        ref = r["val_ap"][anchor]
        if not ref:
            return r["test_vus"][anchor]
        best, best_key = anchor, (-1, -1.0)
        for c in candidates:
            beats = sum(a > b for a, b in zip(r["val_ap"][c], ref))
            if c != anchor and beats >= wins * len(ref) and (beats, np.nanmean(r["val_ap"][c])) > best_key:
                best, best_key = c, (beats, np.nanmean(r["val_ap"][c]))
        return r["test_vus"][best]

    rules["select by val AP (all combos)"] = lambda r: pick(r, all_combos)
    for anchor in [("net", "kmeans", "ar"), ("kmeans", "ar")]:
        for wins in (0.75, 1.0):
            rules[f"consistent, anchor {'+'.join(anchor)}, wins {wins}"] = lambda r, a=anchor, w=wins: pick_consistent(r, all_combos, a, w)
    for anchor in [("net", "kmeans", "ar"), ("kmeans", "ar")]:
        if all(a in ["net", *names] for a in anchor):
            for margin in (0.02, 0.05, 0.1):
                rules[f"select, anchor {'+'.join(anchor)}, margin {margin}"] = lambda r, a=anchor, m=margin: pick(r, all_combos, m, a)
    by_source: dict[str, dict[str, list[float]]] = {}
    for r in rows.values():
        for rule, f in rules.items():
            by_source.setdefault(rule, {}).setdefault(r["source"], []).append(f(r))
    print(f"\n{len(rows)} series")
    print_source_table(by_source)


if __name__ == "__main__":
    main()
