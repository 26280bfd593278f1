"""Issue 34's study: the score's parts and the rules that combine them, per development family.

Reads the bundle of development series (``dev_bundle.py``) and the network part dumped once per
series (``network_parts.py``), refits the cheap parts (window KMeans, the ridge next-step error,
the discord) on each series' training rows as the default does, and scores every combination rule
with TSB-AD's VUS-PR. No rule reads a test label. The table is per family (TSB-AD MSL / SMAP /
SMD, the synthetic suite, the demo, the generated families of :mod:`madcluster.data.families`);
a default is chosen by its worst family's shortfall against that family's best single part, not
by one set's mean.

    python benchmarks/studies/parts/part_study.py --bundle /tmp/dev_bundle.npz --net /tmp/net \\
        --cache /tmp/part_cache > benchmarks/results/parts/families.md
"""

from __future__ import annotations

import argparse
import pickle
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/: benchlib
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/studies/: lib
from lib import SMOOTH, WINDOW, alert_spread, zscore

PARTS = ("own", "kmeans", "ar", "discord")


def series_parts(arrays: dict[str, np.ndarray], net: dict[str, np.ndarray]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per part: (test values, training reference values), read as the default reads them
    (point-wise parts through their centred means)."""
    from lib import default_rows

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


def period_parts(arrays: dict[str, np.ndarray], parts: dict, net: dict[str, np.ndarray]) -> dict:
    """Variants whose scales follow the training rows' dominant period p (issue 34 item 2):
    window KMeans on windows of p (within [16, 2 L]); own / ar read through centred means of p // 2
    and p // 10 steps instead of L // 2 and L // 10."""
    from lib import default_rows

    from madcluster.score.autoregressive import AutoRegressive
    from madcluster.score.parts import FitContext
    from madcluster.score.scales import dominant_period
    from madcluster.score.smoothing import centred_means
    from madcluster.score.window_kmeans import WindowKMeans

    test = default_rows(arrays["train"], arrays["test"])
    train = default_rows(arrays["train"], arrays["train"])
    z = (train - train.mean(axis=0)) / np.where(train.std(axis=0) > 0, train.std(axis=0), 1.0)
    period = int(np.clip(dominant_period(z, WINDOW), 16, 2 * WINDOW))
    out = dict(parts)
    kmeans = WindowKMeans.fit(train.astype(np.float32), FitContext(period, 0))
    out["kmeans@p"] = (kmeans.values(test), kmeans.values(train))
    own_raw = (net["net_test"].astype(np.float64), net["net_train"].astype(np.float64))
    out["own@p"] = tuple(centred_means(v, max(1, period // 2)) for v in own_raw)
    ar = AutoRegressive.fit(train.astype(np.float32), FitContext(WINDOW, 0))
    out["ar@p"] = tuple(centred_means(v, max(1, period // 10)) for v in (ar.values(test), ar.values(train)))
    out["period"] = period
    return out


# ---------------------------------------------------------------------- per-part transforms
# Each maps (test values, training values) -> the part's contribution before weighting; every one
# reads training statistics only, so it streams (a row's contribution is fixed by that row).


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


def moved_baseline(z: np.ndarray, block: int = WINDOW, warm: int = 10 * WINDOW) -> np.ndarray:
    """Per row, the positive part of the median of the values before its block of ``block`` rows
    (0 until ``warm`` rows are seen): where a part has moved on most of the rows scored so far,
    the level it moved to (a new normal), else 0."""
    out = np.zeros(len(z))
    for start in range(warm - warm % block, len(z), block):
        if start >= warm:
            out[start : start + block] = max(float(np.median(z[:start])), 0.0)
    return out


def moved(transform: Callable) -> Callable:
    """``transform`` less the level the part has moved to on the series so far."""
    def apply(x: np.ndarray, ref: np.ndarray) -> np.ndarray:
        z = transform(x, ref)
        return z - moved_baseline(z)
    return apply


TRANSFORMS: dict[str, Callable] = {
    "z-moved": moved(zscore),
    "z": zscore,
    "robust": robust,
    "z-softcap": soft_cap(zscore),
    "z-softcap3": soft_cap(zscore, factor=3.0),
    "z-cap3": hard_cap(zscore),
    "tail": tail,
}
# How the transformed parts add up: their sum, the sum of their positive parts (a part below its
# training mean adds nothing, so its noise cannot hide another's excess) or their maximum.
AGGREGATORS = ("sum", "possum", "max")
WEIGHTS = {
    "equal": {},
    "today": {"own": 0.5, "kmeans": 1.5, "ar": 1.0},
}
PART_SETS = {
    "own+kmeans+ar": ("own", "kmeans", "ar"),
    "own+kmeans+ar+discord": ("own", "kmeans", "ar", "discord"),
}
PERIOD_SETS = {
    "own@p+kmeans@p+ar@p": ("own@p", "kmeans@p", "ar@p"),
    "own@p+kmeans@p+ar@p+discord": ("own@p", "kmeans@p", "ar@p", "discord"),
    "own+kmeans@p+ar+discord": ("own", "kmeans@p", "ar", "discord"),
}


def rules(period: bool = False) -> dict[str, tuple[str, str, str, tuple[str, ...]]]:
    out = {}
    sets = {**PART_SETS, **(PERIOD_SETS if period else {})}
    for t in TRANSFORMS:
        for a in AGGREGATORS:
            for w in WEIGHTS:
                for s, names in sets.items():
                    out[f"{t} {a} | {w} | {s}"] = (t, a, w, names)
    return out


def combine(parts: dict[str, tuple[np.ndarray, np.ndarray]], transform: str, aggregator: str,
            weights: str, names: tuple[str, ...]) -> np.ndarray:
    fn, w = TRANSFORMS[transform], WEIGHTS[weights]
    terms = []
    for name in names:
        x, ref = parts[name]
        terms.append(w.get(name.split("@")[0], 1.0) * fn(x, ref))
    stacked = np.stack(terms)
    if aggregator == "max":
        return stacked.max(axis=0)
    if aggregator == "possum":
        return np.maximum(stacked, 0.0).sum(axis=0)
    return stacked.sum(axis=0)


def main() -> None:
    from lib import open_series

    from madcluster.metrics.tsbad import tsbad_vus

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", required=True)
    parser.add_argument("--net", required=True, help="folder of network_parts.py dumps")
    parser.add_argument("--cache", default=None, help="folder caching each series' parts")
    parser.add_argument("--series", nargs="*", default=None)
    parser.add_argument("--period", action="store_true", help="also the period-scaled variants")
    parser.add_argument("--json", default=None, help="write every series' numbers here")
    parser.add_argument("--rules", nargs="*", default=None, help="only rules whose name contains one of these")
    args = parser.parse_args()
    bundle, cache = open_series(args.bundle, args.series, args.cache)
    table: dict[str, dict[str, float]] = {}
    spreads: dict[str, dict[str, tuple[float, float]]] = {n: {} for n in bundle}
    families: dict[str, str] = {}
    candidates = rules(args.period)
    if args.rules:
        candidates = {k: v for k, v in candidates.items() if any(r in k for r in args.rules)}
    for i, (name, arrays) in enumerate(sorted(bundle.items()), 1):
        cached = cache / f"{name}.pkl" if cache else None
        with np.load(Path(args.net) / f"{name}.npz") as net:
            net = dict(net)
        if cached and cached.exists():
            parts = pickle.loads(cached.read_bytes())
        else:
            parts = series_parts(arrays, net)
        if args.period and "period" not in parts:
            parts = period_parts(arrays, parts, net)
        if cached:
            cached.write_bytes(pickle.dumps(parts))
        labels, first = arrays["labels"], np.asarray(arrays["test"])[:, 0]
        row = {f"part: {p}": tsbad_vus(parts[p][0], labels, first)[1] for p in PARTS}
        row["default (fitted)"] = tsbad_vus(net["default_test"].astype(np.float64), labels, first)[1]
        for rule, (t, a, w, names) in candidates.items():
            combined = combine(parts, t, a, w, names)
            row[rule] = tsbad_vus(combined, labels, first)[1]
            spreads[name][rule] = alert_spread(combined, labels)
        table[name] = row
        families[name] = str(arrays["family"])
        print(f"[{i}/{len(bundle)}] {name}", file=sys.stderr, flush=True)
    report(table, families)
    if args.json:
        import json

        Path(args.json).write_text(json.dumps({"vus_pr": table, "spread": spreads, "family": families}))


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


def choose(path: str, top: int = 15) -> None:
    """From ``--json`` numbers: per rule, each family's shortfall against its best single part,
    the worst one, and leave-one-family-out (the rule chosen without a family, scored on it)."""
    import json

    data = json.loads(Path(path).read_text())
    table, families = data["vus_pr"], data["family"]
    fams = sorted(set(families.values()))
    rows = [r for r in next(iter(table.values())) if not r.startswith("part:")]
    parts = [r for r in next(iter(table.values())) if r.startswith("part:")]
    mean = {r: {f: float(np.mean([table[s][r] for s in table if families[s] == f])) for f in fams}
            for r in rows + parts}
    best = {f: max(mean[p][f] for p in parts) for f in fams}
    short = {r: {f: mean[r][f] - best[f] for f in fams} for r in rows}
    worst = {r: min(short[r].values()) for r in rows}
    print("| rule | " + " | ".join(fams) + " | worst |")
    print("|---|" + "---|" * (len(fams) + 1))
    print("| best part | " + " | ".join(f"{best[f]:.3f}" for f in fams) + " | |")
    for r in sorted(rows, key=lambda r: -worst[r])[:top]:
        print(f"| {r} | " + " | ".join(f"{short[r][f]:+.3f}" for f in fams) + f" | {worst[r]:+.3f} |")
    print("\nLeave one family out (chosen by the worst shortfall on the other families):\n")
    for f in fams:
        others = [g for g in fams if g != f]
        pick = max(rows, key=lambda r: min(short[r][g] for g in others))
        print(f"- without {f}: {pick} -> on {f}: {short[pick][f]:+.3f}")


def summary(path: str) -> None:
    """From ``--json`` numbers: mean VUS-PR per family of each part, the fitted default of
    ``bb28e52`` and the rules with today's weights, with the 46 TSB-AD mean and the alerts' smear."""
    import json

    data = json.loads(Path(path).read_text())
    table, families, spread = data["vus_pr"], data["family"], data["spread"]
    fams = sorted(set(families.values()))
    rows = [r for r in next(iter(table.values()))
            if r.startswith(("part:", "default")) or ("| today |" in r and r.split()[0] in ("z", "z-softcap"))]
    print("| rule | " + " | ".join(fams) + " | 46 TSB-AD | smear |")
    print("|---|" + "---|" * (len(fams) + 2))
    for r in rows:
        cells = [float(np.mean([table[s][r] for s in table if families[s] == f])) for f in fams]
        dev = float(np.mean([table[s][r] for s in table if families[s].startswith("tsbad")]))
        smears = [spread[s][r][1] for s in spread if r in spread[s] and np.isfinite(spread[s][r][1])]
        smear = f"{np.mean(smears):.3f}" if smears else ""
        print(f"| {r} | " + " | ".join(f"{c:.3f}" for c in cells) + f" | {dev:.3f} | {smear} |")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] in ("--choose", "--summary"):
        (choose if sys.argv[1] == "--choose" else summary)(sys.argv[2])
    else:
        main()
