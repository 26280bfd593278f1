"""Issue 34: the `paper` preset, window PCA and window KMeans per development family, beside the
default's parts table (`benchmarks/results/parts/families.md`).

Fits each detector once per series of the development bundle (``dev_bundle.py``) on its training
rows, seed 0, and scores its test rows with TSB-AD's VUS-PR, as the parts study does. Resumable:
each (series, detector) result is written to ``--out`` as it is measured, and kept on a rerun.

    python benchmarks/studies/parts/family_baselines.py --bundle /tmp/dev_bundle.npz \\
        --out benchmarks/results/parts/family_baselines.json \\
        --series chaotic demo drift point rhythm server suite --detectors "window PCA" "window KMeans"
    python benchmarks/studies/parts/family_baselines.py --bundle /tmp/dev_bundle.npz \\
        --out benchmarks/results/parts/family_baselines.json \\
        --series chaotic-0 demo drift-0 point-0 rhythm-0 server-0 suite-sines --detectors paper
    python benchmarks/studies/parts/family_baselines.py --table benchmarks/results/parts/family_baselines.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/: benchlib
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/studies/: lib


def detectors() -> dict[str, Callable[[], object]]:
    from madcluster import MADCluster
    from madcluster.baselines import KMeansDetector, PCADetector

    return {
        "paper": lambda: MADCluster.from_preset("paper", random_state=0),
        "window PCA": lambda: PCADetector(random_state=0),
        "window KMeans": lambda: KMeansDetector(random_state=0),
    }


def measure(args: argparse.Namespace) -> None:
    import torch
    from lib import read_bundle

    from madcluster.metrics.tsbad import tsbad_vus

    torch.set_num_threads(1)
    bundle = read_bundle(args.bundle)
    if args.series:
        bundle = {k: v for k, v in bundle.items() if any(k.startswith(p) for p in args.series)}
    out = Path(args.out)
    done = (
        json.loads(out.read_text()) if out.exists() else {"vus_pr": {}, "family": {}, "fit_s": {}}
    )
    makers = detectors()
    chosen = args.detectors or list(makers)
    for i, (name, arrays) in enumerate(sorted(bundle.items()), 1):
        for detector in chosen:
            if detector in done["vus_pr"].get(name, {}):
                continue
            start = time.perf_counter()
            model = makers[detector]().fit(arrays["train"])
            scores = model.decision_function(arrays["test"])
            fit_s = time.perf_counter() - start
            vus = tsbad_vus(scores, arrays["labels"], np.asarray(arrays["test"])[:, 0])[1]
            done["vus_pr"].setdefault(name, {})[detector] = vus
            done["fit_s"].setdefault(name, {})[detector] = round(fit_s, 1)
            done["family"][name] = str(arrays["family"])
            tmp = out.with_suffix(".tmp")
            tmp.write_text(json.dumps(done, indent=1))
            os.replace(tmp, out)
            print(f"[{i}/{len(bundle)}] {name} {detector}: {vus:.3f} ({fit_s:.0f} s)", flush=True)


def table(path: str) -> None:
    """Markdown: mean VUS-PR per family of each detector (over the series it has measured, how
    many said where it is not all of them)."""
    data = json.loads(Path(path).read_text())
    vus, family = data["vus_pr"], data["family"]
    fams = sorted(set(family.values()))
    names = sorted({d for row in vus.values() for d in row})
    print("| detector | " + " | ".join(fams) + " | 46 TSB-AD |")
    print("|---|" + "---|" * (len(fams) + 1))
    for d in names:
        cells = []
        for f in fams:
            values = [vus[s][d] for s in vus if family[s] == f and d in vus[s]]
            size = sum(family[s] == f for s in vus)  # a family's series, measured or not
            count = f" ({len(values)} of {size})" if values and len(values) < size else ""
            cells.append(f"{np.mean(values):.3f}{count}" if values else "")
        dev = [vus[s][d] for s in vus if family[s].startswith("tsbad") and d in vus[s]]
        cells.append(f"{np.mean(dev):.3f} ({len(dev)})" if dev else "")
        print(f"| {d} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle")
    parser.add_argument("--out")
    parser.add_argument("--series", nargs="*", default=None, help="name prefixes (default: all)")
    parser.add_argument(
        "--detectors", nargs="*", default=None, choices=["paper", "window PCA", "window KMeans"]
    )
    parser.add_argument("--table", default=None, help="print the table of a results file")
    args = parser.parse_args()
    if args.table:
        table(args.table)
    elif args.bundle and args.out:
        measure(args)
    else:
        parser.error("give --bundle and --out, or --table")


if __name__ == "__main__":
    main()
