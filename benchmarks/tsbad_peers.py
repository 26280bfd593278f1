"""Rerun TSB-AD's own detectors on the rebuilt series, the way its runner does (side venv only).

Runs in a virtual environment holding the ``tsb-ad`` package (never the project's): for each CSV
of a folder written by ``benchmarks/tables/tsbad_rebuild.py`` it calls TSB-AD's
``run_Unsupervise_AD(name, data, **Optimal_Multi_algo_HP_dict[name])`` (PCA and KMeansAD are
unsupervised in TSB-AD: fitted on the whole series) and scores it with
``get_metrics(score, label, slidingWindow=find_length_rank(data[:, 0].reshape(-1, 1), rank=1))``,
as ``benchmark_exp/Run_Detector_M.py`` does. ``--tsb-ad-path`` puts another copy of the
``TSB_AD`` package first on ``sys.path`` (e.g. the code at the commit that uploaded the published
table, ``git archive 35ba9c3 TSB_AD``), to tell code changes from data differences.

    /work/sidevenv/tsbad/bin/python benchmarks/tsbad_peers.py --tsbad-dir /tmp/tsbad_m \\
        --detectors PCA KMeansAD --out benchmarks/results/tsbad/peers_tsbad1.5.json
    /work/sidevenv/tsbad/bin/python benchmarks/tsbad_peers.py --tsbad-dir /tmp/tsbad_m \\
        --tsb-ad-path /work/sidevenv/tsbad_35ba9c3 --detectors PCA \\
        --out benchmarks/results/tsbad/peers_tsbad_35ba9c3.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tsbad-dir", type=Path, required=True)
    parser.add_argument("--detectors", nargs="+", default=["PCA", "KMeansAD"])
    parser.add_argument("--tsb-ad-path", help="a folder holding another TSB_AD package to import first")
    parser.add_argument("--only", nargs="*", help="only files whose name contains one of these (e.g. _MSL_)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.tsb_ad_path:
        sys.path.insert(0, args.tsb_ad_path)
    import numpy as np
    import pandas as pd
    import TSB_AD
    from TSB_AD.evaluation.metrics import get_metrics
    from TSB_AD.HP_list import Optimal_Multi_algo_HP_dict
    from TSB_AD.model_wrapper import run_Unsupervise_AD
    from TSB_AD.utils.slidingWindows import find_length_rank

    np.random.seed(2024)  # TSB-AD's runner seed
    record = {"command": "python benchmarks/tsbad_peers.py " + " ".join(argv or sys.argv[1:]),
              "tsb_ad": str(Path(TSB_AD.__file__).parent), "results": []}
    if args.out.is_file():
        record["results"] = json.loads(args.out.read_text())["results"]
    done = {(r["detector"], r["file"]) for r in record["results"]}
    for path in sorted(args.tsbad_dir.glob("*.csv")):
        if args.only and not any(part in path.name for part in args.only):
            continue
        frame = pd.read_csv(path).dropna()
        data = frame.iloc[:, :-1].to_numpy(dtype=float)
        label = frame["Label"].astype(int).to_numpy()
        window = find_length_rank(data[:, 0].reshape(-1, 1), rank=1)
        for name in args.detectors:
            if (name, path.name) in done:
                continue
            params = Optimal_Multi_algo_HP_dict[name]
            start = time.perf_counter()
            score = run_Unsupervise_AD(name, data, **params)
            seconds = time.perf_counter() - start
            if isinstance(score, str):
                raise SystemExit(f"{name} failed on {path.name}: {score}")
            metrics = get_metrics(score, label, slidingWindow=window)
            record["results"].append({"detector": name, "file": path.name, "params": params, "window": int(window),
                                      "vus_pr": float(metrics["VUS-PR"]), "vus_roc": float(metrics["VUS-ROC"]),
                                      "seconds": seconds})
            print(f"{name} {path.name} VUS-PR {metrics['VUS-PR']:.3f} ({seconds:.1f}s)", flush=True)
            tmp = args.out.with_suffix(".tmp")
            tmp.write_text(json.dumps(record, indent=1) + "\n")
            os.replace(tmp, args.out)


if __name__ == "__main__":
    main()
