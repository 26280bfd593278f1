"""Write every development series (46 TSB-AD, synthetic suite, demo, generated families) to one npz.

Why: the development studies of issue 34 refit cheap parts offline many times over the same series;
one bundle (``<name>/train``, ``<name>/test``, ``<name>/labels``, ``<name>/family``) lets a machine
without the datasets (or many worker processes) read them without rebuilding the TSB-AD series.

    python benchmarks/studies/parts/dev_bundle.py --data-dir ../shared/datasets --out /tmp/dev_bundle.npz
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/: benchlib


def development_series(data_dir: str | None) -> dict[str, dict[str, np.ndarray]]:
    """{name: {train, test, labels, family}}; TSB-AD series keep their protocol (fit on the first N)."""
    from benchlib import load_series

    from madcluster.data.families import FAMILIES, family_names, make_family
    from madcluster.data.synthetic import BASE_SIGNALS, make_anomaly_suite, make_demo_data

    out: dict[str, dict[str, np.ndarray]] = {}
    args = argparse.Namespace(tsbad_dir=None, data_dir=data_dir, series=None)
    for dataset, _, series in load_series(args):
        out[series.name] = {"train": series.train, "test": series.test, "labels": series.labels,
                            "family": np.asarray(f"tsbad-{dataset}")}
    for base in BASE_SIGNALS:
        data = make_anomaly_suite(base, seed=0)
        out[f"suite-{base}"] = {"train": data.train, "test": data.test, "labels": data.labels,
                                "family": np.asarray("suite")}
    demo = make_demo_data()
    out["demo"] = {"train": demo.train, "test": demo.test, "labels": demo.labels, "family": np.asarray("demo")}
    for family in FAMILIES:
        for name in family_names(family):
            s = make_family(family, int(name.rsplit("-", 1)[1]))
            out[name] = {"train": s.train, "test": s.test, "labels": s.labels, "family": np.asarray(family)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    series = development_series(args.data_dir)
    flat = {f"{name}/{key}": (np.asarray(v, dtype=np.float32) if key in ("train", "test") else np.asarray(v))
            for name, arrays in series.items() for key, v in arrays.items()}
    np.savez_compressed(args.out, **flat)
    print(f"{len(series)} series -> {args.out}")


if __name__ == "__main__":
    main()
