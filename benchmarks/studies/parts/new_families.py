"""The baselines' VUS-PR on the five families added for the left-out study (states,
accelerometer, dailydrops, water, chaotic20), beside each family's share of anomalous rows, so a
family is known to be neither trivial nor impossible before defaults are chosen on it.

Fits each detector on a series' training rows (seed 0) and scores its test rows with TSB-AD's
VUS-PR (window from the first test channel), as ``family_baselines.py`` does on the bundle.
Resumable: each (series, detector) result goes to ``--out`` as it is measured.

    python benchmarks/studies/parts/new_families.py --out benchmarks/results/parts/new_families.json
    python benchmarks/studies/parts/new_families.py --table benchmarks/results/parts/new_families.json
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

NEW = ("states", "accelerometer", "dailydrops", "water", "chaotic20")


def _default() -> object:
    from madcluster import MADCluster

    return MADCluster(random_state=0)


def _baseline(kind: str) -> Callable[[], object]:
    def make() -> object:
        from madcluster import baselines

        return getattr(baselines, kind)(random_state=0)

    return make


def detectors() -> dict[str, Callable[[], object]]:
    return {
        "window PCA": _baseline("PCADetector"),
        "window KMeans": _baseline("KMeansDetector"),
        "default": _default,
    }


def measure(out: Path, families: list[str], chosen: list[str]) -> None:
    import torch

    from madcluster.data.families import family_names, make_family
    from madcluster.metrics.tsbad import tsbad_vus

    torch.set_num_threads(1)
    done = json.loads(out.read_text()) if out.exists() else {"vus_pr": {}, "share": {}, "fit_s": {}}
    makers = detectors()
    for family in families:
        for name in family_names(family):
            s = make_family(family, int(name.rsplit("-", 1)[1]))
            done["share"][name] = round(float(s.labels.mean()), 4)
            for detector in chosen:
                if detector in done["vus_pr"].get(name, {}):
                    continue
                start = time.perf_counter()
                scores = makers[detector]().fit(s.train).decision_function(s.test)
                fit_s = time.perf_counter() - start
                vus = float(tsbad_vus(scores, s.labels, s.test[:, 0])[1])
                done["vus_pr"].setdefault(name, {})[detector] = round(vus, 4)
                done["fit_s"].setdefault(name, {})[detector] = round(fit_s, 1)
                tmp = out.with_suffix(".tmp")
                tmp.write_text(json.dumps(done, indent=1))
                os.replace(tmp, out)
                print(f"{name} {detector}: {vus:.3f} ({fit_s:.0f} s)", flush=True)


def table(path: Path) -> None:
    """Markdown: per family, the mean share of anomalous rows (a random score's VUS-PR is about
    that) and each detector's mean VUS-PR with its range over the family's series."""
    data = json.loads(path.read_text())
    vus, share = data["vus_pr"], data["share"]
    names = [d for d in detectors() if any(d in row for row in vus.values())]
    print("| family | anomalous rows | " + " | ".join(f"{d} (min-max)" for d in names) + " |")
    print("|---|---|" + "---|" * len(names))
    for family in NEW:
        series = [s for s in share if s.rsplit("-", 1)[0] == family]
        if not series:
            continue
        cells = [f"{np.mean([share[s] for s in series]):.3f}"]
        for d in names:
            values = [vus[s][d] for s in series if d in vus.get(s, {})]
            count = f", {len(values)} of {len(series)}" if len(values) < len(series) else ""
            cells.append(
                f"{np.mean(values):.3f} ({min(values):.3f}-{max(values):.3f}{count})"
                if values
                else ""
            )
        print(f"| {family} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--families", nargs="*", default=list(NEW), choices=NEW)
    parser.add_argument(
        "--detectors", nargs="*", default=["window PCA", "window KMeans"], choices=list(detectors())
    )
    parser.add_argument(
        "--table", type=Path, default=None, help="print the table of a results file"
    )
    args = parser.parse_args()
    if args.table:
        table(args.table)
    elif args.out:
        measure(args.out, args.families, args.detectors)
    else:
        parser.error("give --out, or --table")


if __name__ == "__main__":
    main()
