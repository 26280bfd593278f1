"""Warm-up false alarms (issue 19 part 3): flag rate of the first window of rows vs all rows.

Fits on the first 6,000 rows of the demo generator's normal series and scores 20 fresh 400-row
pieces of its continuation (normal data, same generator), with the model's own threshold_.
Uses only the public API, so the same script measures any version of the package::

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/studies/archive/score/warmup_flags.py            # this tree
    PYTHONPATH=/path/to/old/src OMP_NUM_THREADS=1 python benchmarks/studies/archive/score/warmup_flags.py  # before
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import torch

from madcluster import MADCluster
from madcluster.data.synthetic import make_demo_data

MODELS = {
    "default": {},
    "omnianomaly": {"embedder": "omnianomaly"},
}


def measure(name: str, params: dict, epochs: int | None) -> dict:
    series = make_demo_data(n_train=14000, n_test=1000, seed=7).train
    train, fresh = series[:6000], series[6000:]
    extra = {} if epochs is None else {"epochs": epochs}
    model = MADCluster(random_state=0, **params, **extra).fit(train)
    window = model.window_size
    pieces = [fresh[i : i + 400] for i in range(0, 8000, 400)]
    flags = np.stack([model.predict(piece) for piece in pieces])
    return {
        "model": name,
        "first_window_flag_rate": float(flags[:, :window].mean()),
        "overall_flag_rate": float(flags.mean()),
        "row0_flag_rate": float(flags[:, 0].mean()),
        "ratio": float(flags[:, :window].mean() / max(flags.mean(), 1e-12)),
        "training_file_first_window_flag_rate": float(model.labels_[:window].mean()),
        "training_file_flag_rate": float(model.labels_.mean()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=None, help="override the default epochs")
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    args = parser.parse_args()
    torch.set_num_threads(1)
    for name in args.models:
        print(json.dumps(measure(name, MODELS[name], args.epochs)), flush=True)


if __name__ == "__main__":
    main()
