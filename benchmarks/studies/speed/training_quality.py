"""The default's score per development family when only the network's training changes (issue 36).

Why: choosing how the network trains (batch size, windows per epoch, epochs) should be judged on
every development family, not on one set; the network is the only part a training change moves, so
each configuration's network part is dumped once per series (``network_parts.py --params``) and
combined offline with the cached cheap parts exactly as the default combines them (the weights that
follow the training columns, the positive z-sum; ``part_weights.py``). Prints, per configuration,
each family's mean VUS-PR (TSB-AD's) of the whole score and of the network part alone, the 46
TSB-AD series, and the mean fit seconds the dumps recorded.

    python benchmarks/studies/parts/network_parts.py --bundle /tmp/dev_bundle.npz --out /tmp/net_b32 \\
        --params '{"batch_size": 32, "epoch_windows": 480}'
    python benchmarks/studies/speed/training_quality.py --bundle /tmp/dev_bundle.npz \\
        --cache /tmp/part_cache --net default=/tmp/net "batch 32=/tmp/net_b32"

Series missing from a folder are left out of every configuration's means (so the columns compare
the same series). No rule reads a test label; labels only score.
"""

from __future__ import annotations

import argparse
import pickle
import sys
from pathlib import Path

import numpy as np

STUDIES = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(STUDIES))  # benchmarks/studies/: lib
sys.path.insert(0, str(STUDIES.parent))  # benchmarks/: benchlib


def combined_scores(
    name: str, arrays: dict, cache: Path, net: dict, scale_rows: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """(the default's score, the network part as the default reads it) of one series' test rows
    with ``net``'s network dump in place of the cached one."""
    from lib import FEW_LEVELS, PARTS, SMOOTH, adaptive, discord_reading, zscore

    from madcluster.score.smoothing import centred_means

    parts = pickle.loads((cache / f"{name}.pkl").read_bytes())
    parts["discord"] = discord_reading(name, arrays, cache)
    parts["own"] = tuple(
        centred_means(net[key].astype(np.float64), SMOOTH["own"]) for key in ("net_test", "net_train")
    )
    train = np.asarray(arrays["train"], dtype=np.float64)
    share = float(np.mean([len(np.unique(c)) > FEW_LEVELS for c in train.T]))
    weights = adaptive(share, "linear")
    from madcluster.score.combination import series_scale

    z = {p: zscore(*parts[p]) for p in PARTS}
    scales = {p: series_scale(z[p][:scale_rows]) if scale_rows else 1.0 for p in PARTS}
    total = sum(weights[p] * np.maximum(z[p], 0.0) / scales[p] for p in PARTS)
    return total, parts["own"][0]


def measure(
    bundle: dict, cache: Path, folders: dict[str, Path], scale_rows: int = 0
) -> tuple[dict, dict, list[str]]:
    """Per configuration and series: VUS-PR of the whole score and of the network part, fit s."""
    from madcluster.metrics.tsbad import tsbad_vus

    names = sorted(n for n in bundle if all((f / f"{n}.npz").exists() for f in folders.values()))
    rows: dict[str, dict[str, dict[str, float]]] = {c: {} for c in folders}
    for i, name in enumerate(names, 1):
        arrays = bundle[name]
        labels, first = arrays["labels"], np.asarray(arrays["test"])[:, 0]
        for config, folder in folders.items():
            with np.load(folder / f"{name}.npz") as dump:
                net = {k: dump[k] for k in dump.files}
            total, own = combined_scores(name, arrays, cache, net, scale_rows)
            rows[config][name] = {
                "default": tsbad_vus(total, labels, first)[1],
                "network part": tsbad_vus(own, labels, first)[1],
                "fit s": float(net["fit_seconds"]),
            }
        print(f"[{i}/{len(names)}] {name}", file=sys.stderr, flush=True)
    family = {n: str(bundle[n]["family"]) for n in names}
    return rows, family, names


def report(rows: dict, family: dict) -> str:
    families = sorted(set(family.values()))
    lines = [
        "| configuration | score | " + " | ".join(families) + " | 46 TSB-AD | fit s (mean) |",
        "|---|---|" + "---|" * (len(families) + 2),
    ]
    for config, by_series in rows.items():
        for key in ("default", "network part"):
            cells = [np.mean([v[key] for s, v in by_series.items() if family[s] == f]) for f in families]
            dev = np.mean([v[key] for s, v in by_series.items() if family[s].startswith("tsbad")])
            fit = np.mean([v["fit s"] for v in by_series.values()]) if key == "default" else None
            lines.append(
                f"| {config} | {key} | " + " | ".join(f"{c:.3f}" for c in cells)
                + f" | {dev:.3f} | {'' if fit is None else f'{fit:.1f}'} |"
            )
    return "\n".join(lines)


def main() -> None:
    from lib import read_bundle

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", required=True)
    parser.add_argument("--cache", required=True, help="part_study.py's cache folder")
    parser.add_argument("--series-scale-rows", type=int, default=0,
                        help="each part over its spread on the series' first N steps, as the "
                        "default since issue 34's series scales (3000); 0: the training scales "
                        "alone, as the tables of issue 36's second and third rounds")
    parser.add_argument("--net", nargs="+", required=True, metavar="NAME=FOLDER",
                        help="network dumps of one training configuration each")
    args = parser.parse_args()
    folders = {}
    for item in args.net:
        name, _, folder = item.rpartition("=")
        folders[name or folder] = Path(folder)
    rows, family, names = measure(
        read_bundle(args.bundle), Path(args.cache), folders, args.series_scale_rows
    )
    print(f"{len(names)} series in every folder.\n")
    print(report(rows, family))


if __name__ == "__main__":
    main()
