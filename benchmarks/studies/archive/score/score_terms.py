"""Dump every score term of fitted models, so score combinations can be compared without refitting.

Why: choosing the default's score (issue 19) means comparing sums of terms (MADCluster's head, the
D-RNN's next-step error, the window-KMeans term, cheap input-space terms) on the 46 TSB-AD series,
the synthetic suite and the issue-2 demo series. Each comparison would cost a grid of fits; the
terms of one fit per network configuration answer all of them. For each (source, series, network,
seed) this writes one ``.npz`` holding, for the scored rows, every term standardised with its
training mean and standard deviation (``z_<term>``, float32) and, for reference, the fitted
model's own ``decision_function``; labels, the input-space terms (:func:`input_terms`, no fit) and
the rows are rebuilt by the reader, ``benchmarks/studies/archive/score/score_combos.py``, so the files stay small.

    python benchmarks/studies/archive/score/score_terms.py --sources tsbad suite demo --nets default aux --jobs 16 \\
        --data-dir DATA --out /tmp/terms

Networks: ``default`` = ``MADCluster(input_terms=("kmeans",))``, ``aux`` = the same with the D-RNN's
next-step term (``embedder_params={"auxiliary": "next-step"}``). Input-space terms computed here:
``maxz`` (largest per-channel |z| of a row, training statistics) and ``pca`` (point-wise PCA
reconstruction error, components for 90 % of the training variance, standardised rows), computed by
the reader.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # benchmarks/: benchlib
from benchlib import write_npz

NETS: dict[str, dict[str, Any]] = {
    "default": {"input_terms": ("kmeans",)},
    "aux": {"input_terms": ("kmeans",), "embedder_params": {"auxiliary": "next-step"}},
}


def network_terms(detector: Any, rows: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The fitted model's raw terms on ``rows`` (head terms, ``base``: its own score) and the
    window-KMeans input term (its first input term)."""
    checked = detector.model_.inputs.check_rows(rows)
    terms = detector.model_.outputs(detector.model_.inputs.model_input(checked), detector.net_.score)
    terms = {k: np.asarray(v, dtype=np.float64) for k, v in terms.items()}
    return terms, detector.input_terms_[0].values(checked)


def dump_one(task: dict[str, Any]) -> str:
    import torch

    from madcluster import MADCluster
    from madcluster.score.scoring import head_score, mean_std, standardize

    torch.set_num_threads(1)
    out = Path(task["out"])
    if out.exists():
        return f"{out.name} exists"
    train, test = task["train"], task["test"]
    params = {**NETS[task["net"]], **task.get("params", {})}
    started = time.perf_counter()
    detector = MADCluster(random_state=task["seed"], **params).fit(train)
    fitted = time.perf_counter()
    reference = detector.decision_function(test)
    (test_terms, test_window), (train_terms, train_window) = network_terms(detector, test), network_terms(detector, train)
    stats = detector.score_stats_
    arrays: dict[str, np.ndarray] = {}
    own_train = head_score(train_terms, stats, detector.score_scaling)
    own_stats = mean_std(own_train)
    arrays["z_own"] = standardize(head_score(test_terms, stats, detector.score_scaling), own_stats)
    for name in test_terms:
        arrays[f"z_{name}"] = standardize(test_terms[name], mean_std(train_terms[name]))
    arrays["z_window"] = standardize(test_window, mean_std(train_window))
    arrays = {k: v.astype(np.float32) for k, v in arrays.items()}
    arrays.update(reference=np.asarray(reference, dtype=np.float32), fit_seconds=np.asarray(fitted - started))
    out.parent.mkdir(parents=True, exist_ok=True)
    write_npz(out, arrays)
    return f"{out.name} fit {fitted - started:.0f}s"


def tasks_for(args: argparse.Namespace) -> list[dict[str, Any]]:
    tasks: list[dict[str, Any]] = []
    out = Path(args.out)
    for source in args.sources:
        if source == "tsbad":
            from benchlib import load_series

            ns = argparse.Namespace(tsbad_dir=None, data_dir=args.data_dir, series=args.series)
            for dataset, _entity, series in load_series(ns):
                for net in args.nets:
                    for seed in args.seeds:
                        tasks.append({"train": series.train, "test": series.test, "labels": series.labels,
                                      "net": net, "seed": seed,
                                      "out": str(out / "tsbad" / f"{series.name}__{net}__{seed}.npz")})
        elif source == "suite":
            from madcluster.data.synthetic import BASE_SIGNALS, make_anomaly_suite

            for base in BASE_SIGNALS:
                for seed in args.seeds:
                    data = make_anomaly_suite(base, seed=seed)
                    labels = (np.asarray(data.kinds) >= 0).astype(np.int8)
                    for net in args.nets:
                        tasks.append({"train": data.train, "test": data.test, "labels": labels,
                                      "kinds": data.kinds, "net": net, "seed": seed,
                                      "out": str(out / "suite" / f"{base}__{net}__{seed}.npz")})
        elif source == "demo":  # the issue-2 series: MADCluster(window_size=50, epochs=5)
            from madcluster.data.synthetic import make_demo_data

            data = make_demo_data()
            for net in args.nets:
                for seed in args.seeds:
                    tasks.append({"train": data.train, "test": data.test, "labels": data.labels,
                                  "net": net, "seed": seed, "params": {"window_size": 50, "epochs": 5},
                                  "out": str(out / "demo" / f"demo__{net}__{seed}.npz")})
    # longest first: the suite's and the big series' fits
    tasks.sort(key=lambda t: -len(t["train"]) * (3 if "kinds" in t else 1))
    return tasks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sources", nargs="+", default=["tsbad", "suite", "demo"], choices=["tsbad", "suite", "demo"])
    parser.add_argument("--nets", nargs="+", default=list(NETS), choices=list(NETS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--series", nargs="*", help="TSB-AD series prefixes (default all 46)")
    parser.add_argument("--data-dir")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    tasks = tasks_for(args)
    print(f"{len(tasks)} fits", flush=True)
    started = time.perf_counter()
    with ProcessPoolExecutor(args.jobs, mp_context=get_context("spawn")) as pool:
        futures = [pool.submit(dump_one, t) for t in tasks]
        for i, fut in enumerate(as_completed(futures), 1):
            try:
                print(f"[{i}/{len(tasks)} {time.perf_counter() - started:.0f}s] {fut.result()}", flush=True)
            except Exception as exc:  # noqa: BLE001 -- keep the grid going; the log names the failure
                print(f"[{i}/{len(tasks)}] FAILED: {exc!r}", flush=True)


if __name__ == "__main__":
    main()
