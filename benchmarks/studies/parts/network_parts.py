"""Fit the default once per development series and dump its network part (issue 34's studies).

Why: the network is the only expensive part of the default's score. Choosing how the parts combine
means trying many rules over the same series, so the network's standardised own score is dumped once
per series (test and training rows, float32) with the default's ``decision_function`` and its fit
time; the cheap parts are refitted by the reader (``benchmarks/studies/parts/part_study.py``).

    python benchmarks/studies/parts/dev_bundle.py --data-dir ../shared/datasets --out /tmp/dev_bundle.npz
    python benchmarks/studies/parts/network_parts.py --bundle /tmp/dev_bundle.npz --out /tmp/net --jobs 2
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/: benchlib
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/studies/: lib
from benchlib import write_npz
from lib import read_bundle


def dump_one(
    name: str, arrays: dict[str, np.ndarray], seed: int, out: Path, params: dict | None = None
) -> str:
    import torch

    from madcluster import MADCluster
    from madcluster.score.scoring import standardize

    torch.set_num_threads(1)
    path = out / f"{name}.npz"
    if path.exists():
        return f"{name}: exists"
    t0 = time.perf_counter()
    detector = MADCluster(random_state=seed, **(params or {})).fit(arrays["train"])
    fit_s = time.perf_counter() - t0

    def own(rows: np.ndarray) -> np.ndarray:
        checked = detector.model_.inputs.check_rows(rows)
        return standardize(
            detector.model_.own_scores(detector.model_.inputs.model_input(checked)),
            detector.model_.combination.stats["own"],
        )

    result = {
        "net_test": own(arrays["test"]).astype(np.float32),
        "net_train": own(arrays["train"]).astype(np.float32),
        "default_test": detector.decision_function(arrays["test"]).astype(np.float32),
        "fit_seconds": np.asarray(fit_s),
    }
    write_npz(path, result)
    return f"{name}: fit {fit_s:.1f}s, total {time.perf_counter() - t0:.1f}s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--series", nargs="*", default=None, help="name prefixes (default: all)")
    parser.add_argument("--params", type=json.loads, default={},
                        help='MADCluster parameters as JSON, e.g. \'{"batch_size": 32}\'')
    args = parser.parse_args()
    series = read_bundle(args.bundle)
    if args.series:
        series = {k: v for k, v in series.items() if any(k.startswith(p) for p in args.series)}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    # largest first, so the slowest fits do not start last
    order = sorted(series, key=lambda k: -series[k]["train"].size)
    with ProcessPoolExecutor(args.jobs, mp_context=get_context("spawn")) as pool:
        futures = [pool.submit(dump_one, name, series[name], args.seed, out, args.params) for name in order]
        for i, future in enumerate(as_completed(futures), 1):
            print(f"[{i}/{len(futures)}] {future.result()}", flush=True)


if __name__ == "__main__":
    main()
