"""Rebuild TSB-AD-M's MSL / SMAP / SMD series as TSB-AD CSV files (one per series).

Source: the benchmark arrays (``--data-dir``, else ``$MADCLUSTER_DATA_DIR``, else
``../shared/datasets``) and TSB-AD's per-series table, kept with its source commit in
``benchmarks/results/tsbad/published_vus_pr.csv`` (see ``benchmarks/results/tsbad/README.md``).
A series is the test set of the entity with the same test length and first anomaly index, and its
labels must agree with the table's anomaly counts (:mod:`madcluster.data.tsbad_rebuild`). With the
19-of-28-machine SMD copy this gives 46 series: 14 MSL, 22 SMAP, 10 SMD.

    python benchmarks/tables/tsbad_rebuild.py --out /tmp/tsbad_m [--data-dir ../shared/datasets]

The folder then loads with ``madcluster.data.tsbad.read_tsbad_folder`` (or, one source dataset
per folder, ``load_dataset``), and TSB-AD's own runners read it unchanged.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from madcluster.data.tsbad_rebuild import read_published_table, rebuild_series, write_tsbad_csv
from madcluster.exceptions import DatasetNotFoundError

PUBLISHED = Path(__file__).resolve().parents[1] / "results" / "tsbad" / "published_vus_pr.csv"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for the CSV files")
    parser.add_argument("--data-dir", help="folder holding MSL/, SMAP/, SMD/ (else $MADCLUSTER_DATA_DIR)")
    args = parser.parse_args(argv)
    try:
        rebuilt, unmatched = rebuild_series(read_published_table(PUBLISHED), args.data_dir)
    except DatasetNotFoundError as exc:
        sys.exit(f"benchmark data not found: {exc}\nPass --data-dir (the folder holding MSL/, SMAP/, SMD/) "
                 "or set MADCLUSTER_DATA_DIR.")
    args.out.mkdir(parents=True, exist_ok=True)
    for r in rebuilt:
        write_tsbad_csv(r.data, args.out / r.published.name.file_name)
        print(f"{r.published.name.file_name} <- {r.published.name.dataset} {r.entity}")
    for note in unmatched:
        print(f"not rebuilt: {note}")
    print(f"{len(rebuilt)} series written to {args.out}, {len(unmatched)} not matched")


if __name__ == "__main__":
    main()
