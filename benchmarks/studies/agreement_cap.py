"""Issue 34, held-out set C's runaway part: an agreement cap, tried on the development families and
on the shifted-normal proxy of ``shifted_parts.py``.

Rule: each part's weighted positive excess is at most K times its training 99.9th percentile plus
the other parts' excesses summed (a part may run away only where the others agree). Reads
``part_study.py``'s caches (with ``part_weights.py``'s discord reading) and ``shifted_parts.py``'s
dumps (10 series; the dumps hold no training reading of the discord part, so its cap is read from
the dump's first 1,000 unshifted test rows: a stand-in). The default's weights per series.
Exploratory, not adopted (``benchmarks/results/parts/weights.md``)::

    python benchmarks/studies/agreement_cap.py --bundle /tmp/dev_bundle.npz \\
        --cache /tmp/part_cache --shifted /tmp/shifted
"""

from __future__ import annotations

import pickle
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the part studies beside this one

PARTS = ("own", "kmeans", "ar", "discord")
CAPS = (3.0, 10.0)


def combined(excess: np.ndarray, caps: list[float]) -> dict[str, np.ndarray]:
    """The default's sum of the weighted positive excesses ``(parts, T)``, and the capped sums."""
    total = excess.sum(axis=0)
    out = {"default": total}
    for k in CAPS:
        capped = [np.minimum(excess[i], k * caps[i] + total - excess[i]) for i in range(len(caps))]
        out[f"agreement cap {k:g}x"] = np.sum(capped, axis=0)
    return out


def scores(z: dict, z_train: dict, weights: dict, labels: np.ndarray, first: np.ndarray) -> dict:
    from madcluster.metrics.tsbad import tsbad_vus

    excess = np.stack([weights[p] * np.maximum(z[p], 0.0) for p in PARTS])
    caps = [
        max(weights[p] * float(np.quantile(np.maximum(z_train[p], 0.0), 0.999)), 1e-6)
        for p in PARTS
    ]
    return {k: tsbad_vus(v, labels, first)[1] for k, v in combined(excess, caps).items()}


#: (z, z_train, weights, labels, first) -> VUS-PR by rule name: what a study scores each series with
RuleScores = Callable[[dict, dict, dict, np.ndarray, np.ndarray], dict]


def main(rule_scores: RuleScores | None = None, doc: str | None = None) -> None:
    """The table of ``rule_scores`` (default: the agreement caps) per family and on the proxy."""
    from network_parts import read_bundle, study_arguments

    args = study_arguments(
        doc or __doc__, cache="part_study.py's cache folder", shifted="shifted_parts.py's dumps"
    )
    bundle, cache = read_bundle(args.bundle), Path(args.cache)
    rows, family = family_rows(bundle, cache, rule_scores or scores)
    shifted = shifted_rows(Path(args.shifted), bundle, cache, rule_scores or scores)
    fams = sorted(set(family.values()))
    print("| rule | " + " | ".join(fams) + " | 46 TSB-AD | shifted proxy: as is | shifted |")
    print("|---|" + "---|" * (len(fams) + 3))
    for rule in next(iter(rows.values())):
        cells = [np.mean([rows[s][rule] for s in rows if family[s] == f]) for f in fams]
        dev = np.mean([rows[s][rule] for s in rows if family[s].startswith("tsbad")])
        proxy = [np.mean(shifted[(kind, rule)]) for kind in ("test", "shifted")]
        print(f"| {rule} | " + " | ".join(f"{c:.3f}" for c in [*cells, dev, *proxy]) + " |")


def series_weights(arrays: dict) -> dict[str, float]:
    """The default's weights for a series (from the share of its continuous training columns)."""
    from madcluster.score.input_terms import continuous_share, default_part_weights

    return default_part_weights(continuous_share(np.asarray(arrays["train"], dtype=float)))


def family_rows(bundle: dict, cache: Path, rule_scores: RuleScores = scores) -> tuple[dict, dict]:
    """Each rule's VUS-PR per development series, and each series' family."""
    from part_study import zscore

    rows, family = {}, {}
    for name, arrays in sorted(bundle.items()):
        parts = pickle.loads((cache / f"{name}.pkl").read_bytes())
        parts["discord"] = pickle.loads((cache / f"{name}.discord_balanced.pkl").read_bytes())
        z = {p: zscore(*parts[p]) for p in PARTS}
        z_train = {p: zscore(parts[p][1], parts[p][1]) for p in PARTS}
        first = np.asarray(arrays["test"])[:, 0]
        rows[name] = rule_scores(z, z_train, series_weights(arrays), arrays["labels"], first)
        family[name] = str(arrays["family"])
    return rows, family


def shifted_rows(
    folder: Path, bundle: dict, cache: Path, rule_scores: RuleScores = scores
) -> dict[tuple[str, str], list[float]]:
    """Each rule's VUS-PR on the dumps' test rows as they are and with their new normal."""
    from part_study import zscore

    out: dict[tuple[str, str], list[float]] = {}
    for dump in sorted(folder.glob("*.npz")):
        name = next(n for n in bundle if n.startswith(dump.stem[:8]))
        arrays, data = bundle[name], np.load(dump)
        weights = series_weights(arrays)
        parts = pickle.loads((cache / f"{name}.pkl").read_bytes())
        z_train = {p: zscore(parts[p][1], parts[p][1]) for p in PARTS if p != "discord"}
        z_train["discord"] = data["test/discord"][:1000]  # a stand-in (module docstring)
        for kind in ("test", "shifted"):
            z = {p: data[f"{kind}/{p}"] for p in PARTS}
            found = rule_scores(z, z_train, weights, data["labels"], data["first"])
            for rule, value in found.items():
                out.setdefault((kind, rule), []).append(value)
    return out


if __name__ == "__main__":
    main()
