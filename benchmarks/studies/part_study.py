"""Issue 34's study: the score's parts and the rules that combine them, per development family.

Reads the bundle of development series (``dev_bundle.py``) and the network part dumped once per
series (``network_parts.py``), refits the cheap parts (window KMeans, the ridge next-step error,
the discord) on each series' training rows as the default does, and scores every combination rule
with TSB-AD's VUS-PR. No rule reads a test label. The table is per family (TSB-AD MSL / SMAP /
SMD, the synthetic suite, the demo, the generated families of :mod:`madcluster.data.families`);
a default is chosen by its worst family's shortfall against that family's best single part, not
by one set's mean.

    python benchmarks/studies/part_study.py --bundle /tmp/dev_bundle.npz --net /tmp/net \\
        --cache /tmp/part_cache > benchmarks/results/parts/families.md
"""

from __future__ import annotations

import argparse
import pickle
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

WINDOW = 100
SMOOTH = {"own": WINDOW // 2, "ar": WINDOW // 10}
PARTS = ("own", "kmeans", "ar", "discord")


def series_parts(arrays: dict[str, np.ndarray], net: dict[str, np.ndarray]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per part: (test values, training reference values), read as the default reads them
    (point-wise parts through their centred means)."""
    from part_scores import default_rows

    from madcluster.score.autoregressive import AutoRegressive
    from madcluster.score.discord import Discord
    from madcluster.score.parts import FitContext
    from madcluster.score.smoothing import centred_means
    from madcluster.score.window_kmeans import WindowKMeans

    train = np.asarray(arrays["train"], dtype=np.float64)
    test = default_rows(arrays["train"], arrays["test"])
    train_checked = default_rows(arrays["train"], arrays["train"])
    context = FitContext(WINDOW, 0)
    out = {"own": (net["net_test"].astype(np.float64), net["net_train"].astype(np.float64))}
    kmeans = WindowKMeans.fit(train_checked.astype(np.float32), context)
    out["kmeans"] = (kmeans.values(test), kmeans.values(train_checked))
    ar = AutoRegressive.fit(train_checked.astype(np.float32), context)
    out["ar"] = (ar.values(test), ar.values(train_checked))
    discord = Discord.fit(train_checked.astype(np.float32), context)
    out["discord"] = (discord.values(test), discord.reference_values(train_checked))
    del train
    return {k: tuple(centred_means(v, SMOOTH[k]) if k in SMOOTH else v for v in pair) for k, pair in out.items()}


# ---------------------------------------------------------------------- per-part transforms
# Each maps (test values, training values) -> the part's contribution before weighting; every one
# reads training statistics only, so it streams (a row's contribution is fixed by that row).

def zscore(x: np.ndarray, ref: np.ndarray) -> np.ndarray:
    std = ref.std()
    return (x - ref.mean()) / (std if std > 1e-12 else 1.0)


def robust(x: np.ndarray, ref: np.ndarray) -> np.ndarray:
    med = np.median(ref)
    mad = 1.4826 * np.median(np.abs(ref - med))
    spread = mad if mad > 1e-12 else (ref.std() if ref.std() > 1e-12 else 1.0)
    return (x - med) / spread


def soft_cap(transform: Callable, knee_q: float = 0.999, factor: float = 1.0) -> Callable:
    """``transform`` up to a knee (``factor`` x the training ``knee_q`` quantile of the
    transformed training values), logarithmic above it: a runaway part keeps its order but
    cannot outweigh the others by orders of magnitude."""
    def apply(x: np.ndarray, ref: np.ndarray) -> np.ndarray:
        z, zr = transform(x, ref), transform(ref, ref)
        knee = max(factor * float(np.quantile(zr, knee_q)), 1.0)
        return np.where(z > knee, knee + np.log1p(np.maximum(z - knee, 0.0)), z)
    return apply


def hard_cap(transform: Callable, factor: float = 3.0, knee_q: float = 0.999) -> Callable:
    def apply(x: np.ndarray, ref: np.ndarray) -> np.ndarray:
        z, zr = transform(x, ref), transform(ref, ref)
        return np.minimum(z, factor * max(float(np.quantile(zr, knee_q)), 1.0))
    return apply


def tail(x: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """-log10 of the training tail probability, extrapolated exponentially past the maximum."""
    srt = np.sort(ref)
    n = len(srt)
    rank = np.searchsorted(srt, x, side="right")
    p = np.maximum(1.0 - rank / (n + 1), 1.0 / (n + 1))
    scale = max(float(np.quantile(srt, 0.999) - np.quantile(srt, 0.99)), 1e-12) / np.log(10)
    beyond = np.maximum(x - srt[-1], 0.0) / scale
    return -np.log10(p) + beyond / np.log(10)


TRANSFORMS: dict[str, Callable] = {
    "z": zscore,
    "robust": robust,
    "z-softcap": soft_cap(zscore),
    "z-softcap3": soft_cap(zscore, factor=3.0),
    "robust-softcap": soft_cap(robust),
    "robust-softcap3": soft_cap(robust, factor=3.0),
    "z-cap3": hard_cap(zscore),
    "tail": tail,
}
WEIGHTS = {
    "equal": {},
    "today": {"own": 0.5, "kmeans": 1.5, "ar": 1.0},
}
PART_SETS = {
    "own+kmeans+ar": ("own", "kmeans", "ar"),
    "own+kmeans+ar+discord": ("own", "kmeans", "ar", "discord"),
}


def rules() -> dict[str, tuple[str, str, tuple[str, ...]]]:
    out = {}
    for t in TRANSFORMS:
        for w in WEIGHTS:
            for s, names in PART_SETS.items():
                out[f"{t} | {w} | {s}"] = (t, w, names)
    return out


def combine(parts: dict[str, tuple[np.ndarray, np.ndarray]], transform: str, weights: str,
            names: tuple[str, ...]) -> np.ndarray:
    fn, w = TRANSFORMS[transform], WEIGHTS[weights]
    total = np.zeros_like(parts[names[0]][0])
    for name in names:
        x, ref = parts[name]
        total = total + w.get(name, 1.0) * fn(x, ref)
    return total


def main() -> None:
    from network_parts import read_bundle

    from madcluster.metrics.tsbad import tsbad_vus

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", required=True)
    parser.add_argument("--net", required=True, help="folder of network_parts.py dumps")
    parser.add_argument("--cache", default=None, help="folder caching each series' parts")
    parser.add_argument("--series", nargs="*", default=None)
    args = parser.parse_args()
    bundle = read_bundle(args.bundle)
    if args.series:
        bundle = {k: v for k, v in bundle.items() if any(k.startswith(p) for p in args.series)}
    cache = Path(args.cache) if args.cache else None
    if cache:
        cache.mkdir(parents=True, exist_ok=True)
    table: dict[str, dict[str, float]] = {}
    families: dict[str, str] = {}
    candidates = rules()
    for i, (name, arrays) in enumerate(sorted(bundle.items()), 1):
        cached = cache / f"{name}.pkl" if cache else None
        if cached and cached.exists():
            parts = pickle.loads(cached.read_bytes())
        else:
            with np.load(Path(args.net) / f"{name}.npz") as net:
                parts = series_parts(arrays, dict(net))
            if cached:
                cached.write_bytes(pickle.dumps(parts))
        labels, first = arrays["labels"], np.asarray(arrays["test"])[:, 0]
        row = {f"part: {p}": tsbad_vus(parts[p][0], labels, first)[1] for p in PARTS}
        with np.load(Path(args.net) / f"{name}.npz") as net:
            row["default (fitted)"] = tsbad_vus(net["default_test"].astype(np.float64), labels, first)[1]
        for rule, (t, w, names) in candidates.items():
            row[rule] = tsbad_vus(combine(parts, t, w, names), labels, first)[1]
        table[name] = row
        families[name] = str(arrays["family"])
        print(f"[{i}/{len(bundle)}] {name}", file=sys.stderr, flush=True)
    report(table, families)


def report(table: dict[str, dict[str, float]], families: dict[str, str]) -> None:
    """Markdown: mean VUS-PR per family and rule, the best part per family, and each rule's worst
    shortfall against the family's best part (the choosing rule)."""
    fams = sorted(set(families.values()))
    rows = list(next(iter(table.values())))
    means = {r: {f: float(np.mean([table[s][r] for s in table if families[s] == f])) for f in fams} for r in rows}
    best_part = {f: max(means[f"part: {p}"][f] for p in PARTS) for f in fams}
    shortfall = {r: min(means[r][f] - best_part[f] for f in fams) for r in rows}
    tsbad = [f for f in fams if f.startswith("tsbad")]
    dev46 = {r: float(np.mean([table[s][r] for s in table if families[s] in tsbad])) for r in rows}
    print("| rule | " + " | ".join(f"{f} ({sum(v == f for v in families.values())})" for f in fams)
          + " | 46 TSB-AD | worst shortfall vs best part |")
    print("|---|" + "---|" * (len(fams) + 2))
    for r in sorted(rows, key=lambda r: -shortfall[r]):
        cells = " | ".join(f"{means[r][f]:.3f}" for f in fams)
        print(f"| {r} | {cells} | {dev46[r]:.3f} | {shortfall[r]:+.3f} |")


if __name__ == "__main__":
    main()
