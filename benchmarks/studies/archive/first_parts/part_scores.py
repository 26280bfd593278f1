"""Dump the network part of fitted default models on test rows and on injected training tails.

Why: choosing how a fit weighs its score's parts (``benchmarks/studies/lib.py``) means comparing many
weighting rules on the 46 TSB-AD series. The network is the only expensive part; this fits
``MADCluster(random_state=SEED)`` once per series and writes, per series, one ``.npz`` with the
network's standardised own score (warm-up calibrated, as the default adds it) on the test rows, on
the clean training rows and on ``--variants`` copies of the training rows with anomalies injected
into the held-out tail (the network's validation rows, which it never trained on), plus the
injection labels. The cheap input-space parts are refitted by the reader
(``benchmarks/studies/archive/first_parts/part_weighting.py``), which rebuilds the rows and the injections from the same seeds.

    python benchmarks/studies/archive/first_parts/part_scores.py --jobs 2 --out /tmp/parts --data-dir ../shared/datasets
    python benchmarks/studies/archive/first_parts/part_scores.py --source suite --out /tmp/parts-suite   # the synthetic suite, 3 bases
    python benchmarks/studies/archive/first_parts/part_scores.py --source demo --out /tmp/parts-demo     # the issue-2 demo series

``suite`` and ``demo`` dumps also hold their rows and labels (``train``, ``test``, ``labels``; the
suite's ``kinds``); the demo is fitted as its benchmark does (``window_size=50, epochs=5``).
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # benchmarks/: benchlib
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/studies/: lib
from benchlib import write_npz
from lib import injected_variants

VARIANTS = 8


def own_scores(detector, rows: np.ndarray) -> np.ndarray:
    from madcluster.score.scoring import standardize

    checked = detector.model_.inputs.check_rows(rows)
    return standardize(detector.model_.own_scores(detector.model_.inputs.model_input(checked)), detector.model_.combination.stats["own"])


def dump_one(name: str, series, seed: int, variants: int, out: Path, params: dict | None = None,
             extra: dict | None = None) -> str:
    import torch

    from madcluster import MADCluster

    torch.set_num_threads(1)
    path = out / f"{name}.npz"
    if path.exists():
        return f"{name}: exists"
    t0 = time.perf_counter()
    detector = MADCluster(random_state=seed, **(params or {})).fit(series.train)
    fit_s = time.perf_counter() - t0
    made = injected_variants(np.asarray(series.train, dtype=np.float64), detector.window_size, variants, seed)
    arrays = {
        "net_test": own_scores(detector, series.test).astype(np.float32),
        "net_train": own_scores(detector, series.train).astype(np.float32),
        "net_var": np.stack([own_scores(detector, rows) for rows, _ in made]).astype(np.float32),
        "default_test": detector.decision_function(series.test).astype(np.float32),
        "fit_seconds": np.asarray(fit_s),
        **(extra or {}),
    }
    write_npz(path, arrays)
    return f"{name}: fit {fit_s:.1f}s, total {time.perf_counter() - t0:.1f}s"


def main() -> None:
    from benchlib import add_series_arguments, load_series

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    add_series_arguments(parser)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--variants", type=int, default=VARIANTS)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--source", choices=["tsbad", "suite", "demo"], default="tsbad")
    parser.add_argument("--params", default="{}", help="MADCluster keyword arguments as JSON, e.g. a forecasting "
                        "network: '{\"embedder_params\": {\"auxiliary\": \"next-step\"}}'")
    args = parser.parse_args()
    import json

    extra_params = json.loads(args.params)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tasks = []
    if args.source == "tsbad":
        tasks = [(s.name, s, dict(extra_params), {}) for _, _, s in load_series(args)]
    elif args.source == "suite":
        from types import SimpleNamespace

        from madcluster.data.synthetic import BASE_SIGNALS, make_anomaly_suite

        for base in BASE_SIGNALS:
            data = make_anomaly_suite(base, seed=args.seed)
            extra = {"train": data.train, "test": data.test, "kinds": data.kinds, "labels": (data.kinds >= 0)}
            tasks.append((base, SimpleNamespace(train=data.train, test=data.test), dict(extra_params), extra))
    else:
        from types import SimpleNamespace

        from madcluster.data.synthetic import make_demo_data

        data = make_demo_data()
        extra = {"train": data.train, "test": data.test, "labels": data.labels}
        tasks.append(("demo", SimpleNamespace(train=data.train, test=data.test), {"window_size": 50, "epochs": 5, **extra_params}, extra))
    with ProcessPoolExecutor(args.jobs, mp_context=get_context("spawn")) as pool:
        futures = [pool.submit(dump_one, name, s, args.seed, args.variants, out, params, extra) for name, s, params, extra in tasks]
        for i, future in enumerate(as_completed(futures), 1):
            print(f"[{i}/{len(futures)}] {future.result()}", flush=True)


if __name__ == "__main__":
    main()
