"""Compare score combinations on the terms ``benchmarks/studies/archive/score/score_terms.py`` dumped, without refitting.

A combination is a weighted sum of standardised terms, written ``own+window+0.5*base``; terms:
``own`` (MADCluster's head), ``base`` (the D-RNN's next-step error, ``aux`` networks only),
``window`` (window KMeans), ``maxz`` and ``pca`` (input-space, point-wise; computed here from the
rows). Reports, per network and combination: TSB-AD mean VUS-PR per source dataset (the 46
series), the synthetic suite's ROC-AUC (mean "all" and the worst kind over bases and seeds) and
the issue-2 demo series' ROC-AUC.

    python benchmarks/studies/archive/score/score_combos.py --terms /tmp/terms --combos own own+window own+window+base

The dumped terms miss the warm-up calibration of the first window of rows, so a combination's
numbers can differ slightly from the fitted model's (``reference``: the model as fitted).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # benchmarks/: benchlib
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/studies/: lib

from lib import input_terms


def parse_combo(text: str) -> list[tuple[float, str]]:
    parts = []
    for part in text.split("+"):
        match = re.fullmatch(r"(?:([0-9.]+)\*)?(\w+)", part.strip())
        if not match:
            sys.exit(f"bad combination part {part!r}")
        parts.append((float(match.group(1) or 1.0), match.group(2)))
    return parts


def combine(arrays: dict[str, np.ndarray], combo: str) -> np.ndarray | None:
    if combo == "reference":
        return arrays["reference"].astype(np.float64)
    if combo.startswith("max:"):
        parts = [combine(arrays, c) for c in combo[4:].split(",")]
        return None if any(p is None for p in parts) else np.max(parts, axis=0)
    total = 0.0
    for weight, name in parse_combo(combo):
        if name == "reference":
            total = total + weight * arrays["reference"].astype(np.float64)
            continue
        key = f"z_{name}"
        if key not in arrays:
            return None
        total = total + weight * arrays[key].astype(np.float64)
    return np.asarray(total)


WINDOW_VARIANTS: list[tuple[int, int]] = []


def load(path: Path, train: np.ndarray, test: np.ndarray) -> dict[str, np.ndarray]:
    from madcluster.baselines import KMeansDetector
    from madcluster.score.autoregressive import AutoRegressive
    from madcluster.score.scoring import mean_std, standardize
    from madcluster.score.window_kmeans import WindowKMeans

    arrays = dict(np.load(path))
    extra = input_terms(train.astype(np.float64), test.astype(np.float64))
    lib_ar = AutoRegressive.fit(train)
    arrays["z_libar"] = standardize(lib_ar.values(test), mean_std(lib_ar.values(train)))
    for name in ("maxz", "pca", "ar"):
        arrays[f"z_{name}"] = standardize(extra[name], mean_std(extra[f"train/{name}"]))
        eps = 1e-3 * np.median(extra[f"train/{name}"]) + 1e-12
        arrays[f"z_l{name}"] = standardize(np.log(extra[name] + eps), mean_std(np.log(extra[f"train/{name}"] + eps)))
        arrays[f"z_s{name}"] = standardize(np.sqrt(extra[name]), mean_std(np.sqrt(extra[f"train/{name}"])))
    for distinct in (3, 10):
        keep = [j for j in range(train.shape[1]) if len(np.unique(train[:, j])) > distinct]
        if keep:
            ar = AutoRegressive.fit(train[:, keep])
            arrays[f"z_ar{distinct}"] = standardize(ar.values(test[:, keep]), mean_std(ar.values(train[:, keep])))
        else:
            arrays[f"z_ar{distinct}"] = np.zeros(len(test))
    levels = np.array([len(np.unique(train[:, j])) for j in range(train.shape[1])])
    for tag, keep in (("kmx", levels > 3), ("kmb", (levels > 3) | (levels == 1))):
        if keep.any():
            km = KMeansDetector(window_size=100, random_state=0).fit(train[:, keep])
            arrays[f"z_{tag}"] = standardize(km.decision_function(test[:, keep]), mean_std(km.decision_function(train[:, keep])))
        else:
            arrays[f"z_{tag}"] = np.zeros(len(test))
    for window, k in WINDOW_VARIANTS:
        term = KMeansDetector(window_size=window, n_centroids=k, random_state=0).fit(train)
        arrays[f"z_win{window}k{k}"] = standardize(term.decision_function(test), mean_std(term.decision_function(train)))
        fitted = WindowKMeans(term.scaler_.mean_, term.scaler_.scale_, term.cluster_centers_.astype(np.float32), window, 1)
        trail_train, trail_test = trailing(fitted, train), trailing(fitted, test)
        arrays[f"z_trail{window}k{k}"] = standardize(trail_test, mean_std(trail_train))
    return arrays


def trailing(term, rows: np.ndarray) -> np.ndarray:
    """Causal window term: step t scores the window ending at t (the first window for t < L - 1)."""
    from madcluster.score.window_kmeans import window_distances

    d = window_distances(term, rows, np.arange(len(rows) - term.window_size + 1))
    return np.concatenate([np.full(term.window_size - 1, d[0]), d])


def tsbad_rows(terms: Path, combos: list[str], data_dir: str | None) -> list[dict]:
    from benchlib import PUBLISHED as published

    from madcluster.data.tsbad_rebuild import read_published_table, rebuild_series
    from madcluster.metrics.tsbad import tsbad_vus
    rebuilt, _ = rebuild_series(read_published_table(published), data_dir)
    rows = []
    for r in rebuilt:
        series = r.data
        for path in sorted((terms / "tsbad").glob(f"{series.name}__*.npz")):
            _, net, seed = path.stem.split("__")
            arrays = load(path, series.train, series.test)
            for combo in combos:
                scores = combine(arrays, combo)
                if scores is not None:
                    _, pr = tsbad_vus(scores, series.labels, series.test)
                    rows.append({"source": "tsbad", "dataset": r.published.name.dataset, "series": series.name,
                                 "net": net, "seed": int(seed), "combo": combo, "vus_pr": pr})
    return rows


def suite_rows(terms: Path, combos: list[str]) -> list[dict]:
    from sklearn.metrics import roc_auc_score

    from madcluster.data.synthetic import make_anomaly_suite, make_demo_data, roc_auc_by_kind

    rows = []
    for path in sorted((terms / "suite").glob("*.npz")):
        base, net, seed = path.stem.split("__")
        data = make_anomaly_suite(base, seed=int(seed))
        arrays = load(path, data.train, data.test)
        for combo in combos:
            scores = combine(arrays, combo)
            if scores is not None:
                rows.append({"source": "suite", "base": base, "net": net, "seed": int(seed), "combo": combo,
                             **roc_auc_by_kind(scores, data.kinds, data.kind_names)})
    demo = make_demo_data()
    for path in sorted((terms / "demo").glob("*.npz")):
        _, net, seed = path.stem.split("__")
        arrays = load(path, demo.train, demo.test)
        for combo in combos:
            scores = combine(arrays, combo)
            if scores is not None:
                rows.append({"source": "demo", "net": net, "seed": int(seed), "combo": combo,
                             "all": float(roc_auc_score(demo.labels, scores))})
    return rows


def summary(rows: list[dict], combos: list[str]) -> str:
    lines = ["| net | combination | MSL | SMAP | SMD | all 46 | suite all | suite worst kind | demo |",
             "|---|---|---|---|---|---|---|---|---|"]
    kinds = ("spike", "level-shift", "trend-drift", "frequency-change", "variance-burst", "broken-correlation", "flat-line")
    for net in ("default", "aux"):
        for combo in combos:
            mine = [r for r in rows if r["net"] == net and r["combo"] == combo]
            if not mine:
                continue
            ts = [r for r in mine if r["source"] == "tsbad"]
            cells = [f"{np.mean([r['vus_pr'] for r in ts if r['dataset'] == d]):.3f}" if ts else "" for d in ("MSL", "SMAP", "SMD")]
            cells.append(f"{np.mean([r['vus_pr'] for r in ts]):.3f}" if ts else "")
            su = [r for r in mine if r["source"] == "suite"]
            cells.append(f"{np.mean([r['all'] for r in su]):.3f}" if su else "")
            if su:
                worst = min((r[k], f"{k} {r['base']} s{r['seed']}") for r in su for k in kinds if k in r)
                cells.append(f"{worst[0]:.3f} ({worst[1]})")
            else:
                cells.append("")
            de = [r for r in mine if r["source"] == "demo"]
            cells.append(f"{np.mean([r['all'] for r in de]):.3f}" if de else "")
            lines.append(f"| {net} | `{combo}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--terms", required=True, type=Path)
    parser.add_argument("--combos", nargs="+", default=["reference", "own", "own+window", "own+base+window"])
    parser.add_argument("--sources", nargs="+", default=["tsbad", "suite"], choices=["tsbad", "suite"])
    parser.add_argument("--data-dir")
    parser.add_argument("--windows", nargs="*", default=[], help="extra window-KMeans terms WINDOWxK, e.g. 40x10 (named winWkK)")
    parser.add_argument("--json", type=Path, help="write every row here")
    args = parser.parse_args()
    WINDOW_VARIANTS.extend(tuple(int(v) for v in w.split("x")) for w in args.windows)
    rows = []
    if "suite" in args.sources:
        rows += suite_rows(args.terms, args.combos)
    if "tsbad" in args.sources:
        rows += tsbad_rows(args.terms, args.combos, args.data_dir)
    print(summary(rows, args.combos))
    if args.json:
        args.json.write_text(json.dumps(rows) + "\n")


if __name__ == "__main__":
    main()
