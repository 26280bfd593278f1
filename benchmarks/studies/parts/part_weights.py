"""Issue 34: the default's part weights, chosen by the worst development family, not one set's mean.

Reads ``part_study.py``'s caches (each series' parts: the network part dumped by
``network_parts.py``, the cheap parts refitted; the discord part refitted here as the default
fits and reads it, cached beside them) and scores, with TSB-AD's
VUS-PR, the positive z-sum (the default rule) under

1. a grid of static weights (relative to kmeans = 1): each family's shortfall against its best
   single part, the worst family, the 46 TSB-AD series, and leave-one-family-out;
2. weights that follow the share of the training columns with more than three values (the rule
   the default adopted: ``madcluster.score.input_terms.default_part_weights``), at a cut (share
   >= 0.5) and interpolated linearly, with the alerts' smear (``part_study.alert_spread``).

No rule reads a test label; labels only score.

    python benchmarks/studies/parts/part_weights.py --bundle /tmp/dev_bundle.npz --cache /tmp/part_cache \\
        > benchmarks/results/parts/weights.md
"""

from __future__ import annotations

import argparse
import itertools
import pickle
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/: benchlib
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/studies/: lib
from lib import FEW_LEVELS, PARTS, adaptive, discord_reading

GRID = {
    "own": (0.17, 0.33, 0.5, 0.67, 1.0),
    "ar": (0.33, 0.5, 0.67, 1.0, 1.33, 2.0),
    "discord": (0.0, 0.17, 0.33, 0.67, 1.0),
}


def grid_weights() -> dict[str, dict[str, float]]:
    out = {}
    for own, ar, discord in itertools.product(GRID["own"], GRID["ar"], GRID["discord"]):
        out[f"own {own:g} ar {ar:g} discord {discord:g}"] = {
            "own": own, "kmeans": 1.0, "ar": ar, "discord": discord
        }  # fmt: skip
    return out


def measure(bundle: dict, cache: Path) -> tuple[dict, dict, dict]:
    from lib import alert_spread, zscore

    from madcluster.metrics.tsbad import tsbad_vus

    static = grid_weights()
    vus: dict[str, dict[str, float]] = {}
    smear: dict[str, dict[str, float]] = {}
    family: dict[str, str] = {}
    for i, (name, arrays) in enumerate(sorted(bundle.items()), 1):
        parts = pickle.loads((cache / f"{name}.pkl").read_bytes())
        parts["discord"] = discord_reading(name, arrays, cache)
        z = {p: np.maximum(zscore(*parts[p]), 0.0) for p in PARTS}
        train = np.asarray(arrays["train"], dtype=np.float64)
        share = float(np.mean([len(np.unique(c)) > FEW_LEVELS for c in train.T]))
        labels, first = arrays["labels"], np.asarray(arrays["test"])[:, 0]
        row = {f"part: {p}": tsbad_vus(parts[p][0], labels, first)[1] for p in PARTS}
        spread = {}
        weights = {**static, **{f"by columns, {m}": adaptive(share, m) for m in ("cut", "linear")}}
        for key, w in weights.items():
            total = sum(w[p] * z[p] for p in PARTS)
            row[key] = tsbad_vus(total, labels, first)[1]
            if not key.startswith("own"):
                spread[key] = alert_spread(total, labels)[1]
        spread["own 0.33 ar 0.67 discord 0.33"] = alert_spread(
            sum(static["own 0.33 ar 0.67 discord 0.33"][p] * z[p] for p in PARTS), labels
        )[1]
        vus[name], smear[name], family[name] = row, spread, str(arrays["family"])
        print(f"[{i}/{len(bundle)}] {name} (continuous share {share:.2f})", file=sys.stderr)
    return vus, smear, family


def report(vus: dict, smear: dict, family: dict) -> None:
    fams = sorted(set(family.values()))
    keys = [k for k in next(iter(vus.values())) if not k.startswith("part:")]
    parts = [f"part: {p}" for p in PARTS]

    def mean(key: str, fam: str) -> float:
        return float(np.mean([vus[s][key] for s in vus if family[s] == fam]))

    best = {f: max(mean(p, f) for p in parts) for f in fams}
    short = {k: {f: mean(k, f) - best[f] for f in fams} for k in keys}
    worst = {k: min(short[k].values()) for k in keys}
    dev = {k: float(np.mean([vus[s][k] for s in vus if family[s].startswith("tsbad")])) for k in keys}
    today = "own 0.33 ar 0.67 discord 0.33"

    def table(rows: list[str], with_smear: bool = False) -> None:
        extra = " smear |" if with_smear else ""
        print("| weights | " + " | ".join(fams) + f" | 46 TSB-AD | worst |{extra}")
        print("|---|" + "---|" * (len(fams) + 2 + with_smear))
        for k in rows:
            cells = " | ".join(f"{mean(k, f):.3f} ({short[k][f]:+.3f})" for f in fams)
            s = ""
            if with_smear:
                values = [smear[x][k] for x in smear if k in smear[x] and np.isfinite(smear[x][k])]
                s = f" {np.mean(values):.3f} |"
            print(f"| {k} | {cells} | {dev[k]:.3f} | {worst[k]:+.3f} |{s}")

    print("Mean VUS-PR per family (shortfall against the family's best single part).\n")
    print("| best single part | " + " | ".join(f"{best[f]:.3f}" for f in fams) + " | | |\n")
    print("## The weights that follow the training columns (the default) against the old ones\n")
    table([today, "by columns, cut", "by columns, linear"], with_smear=True)
    print("\n## Static weights (kmeans = 1): the best 12 by the worst family\n")
    table(sorted(keys, key=lambda k: -worst[k])[:12])
    constrained = [k for k in keys if k.startswith("own") and dev[k] >= 0.63]
    print("\n## Static weights keeping the 46 TSB-AD series at .63 or more: the best 5\n")
    table(sorted(constrained, key=lambda k: -worst[k])[:5])
    print("\n## Leave one family out (static weights chosen by the worst of the others)\n")
    statics = [k for k in keys if k.startswith("own")]
    for f in fams:
        others = [g for g in fams if g != f]
        pick = max(statics, key=lambda k: min(short[k][g] for g in others))
        print(f"- without {f}: {pick} -> on {f}: {short[pick][f]:+.3f}")


def main() -> None:
    from lib import read_bundle

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", required=True)
    parser.add_argument("--cache", required=True, help="part_study.py's cache folder")
    args = parser.parse_args()
    report(*measure(read_bundle(args.bundle), Path(args.cache)))


if __name__ == "__main__":
    main()
