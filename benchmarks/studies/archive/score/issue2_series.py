"""ROC-AUC on the demo series as issue 2 measured it: ``MADCluster(window_size=50, epochs=5)``.

    python benchmarks/studies/archive/score/issue2_series.py            # the default (input terms) and input_terms=None, seeds 0 1 2

Prints one JSON line per (configuration, seed); one torch thread, fixed seeds.
"""

from __future__ import annotations

import json

import torch
from sklearn.metrics import roc_auc_score

from madcluster import MADCluster
from madcluster.data.synthetic import make_demo_data


def main() -> None:
    torch.set_num_threads(1)
    data = make_demo_data()
    for params in ({}, {"input_terms": None}):
        for seed in (0, 1, 2):
            model = MADCluster(window_size=50, epochs=5, random_state=seed, **params).fit(data.train)
            auc = roc_auc_score(data.labels, model.decision_function(data.test))
            print(json.dumps({"params": params, "seed": seed, "roc_auc": float(auc)}), flush=True)


if __name__ == "__main__":
    main()
