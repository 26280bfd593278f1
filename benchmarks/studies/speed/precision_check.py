"""float32 vs ``precision="bfloat16"`` on real data: same seed, fit time, ROC-AUC, VUS-PR, rank agreement.

    MADCLUSTER_DATA_DIR=../shared/datasets python benchmarks/studies/speed/precision_check.py C-1 D-15 F-7
    python benchmarks/studies/speed/precision_check.py --embedder dcdetector --epochs 1 C-1

For each MSL channel named, the embedder is trained alone (``base-only``) and + MADCluster
(``full``) in both precisions with the same seed (2 epochs, training stride 10, no validation
split, one torch thread) and scores the channel's test series. Prints one JSON line per fit and
the Spearman correlation of the float32 and bfloat16 scores per mode.
"""

from __future__ import annotations

import argparse
import json
import time

import torch
from scipy.stats import spearmanr
from sklearn.metrics import roc_auc_score

from madcluster import MADCluster
from madcluster.data.datasets import load_dataset
from madcluster.metrics import vus_pr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("entities", nargs="+", help="MSL channel names, e.g. C-1 D-15 F-7")
    parser.add_argument("--embedder", default="anomaly_transformer")
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(1)
    data = load_dataset("MSL")
    by_name = {e.name: e for e in data.entities}
    for name in args.entities:
        if name not in by_name:
            raise SystemExit(f"unknown MSL channel {name!r}; known: {', '.join(by_name)}")
        entity = by_name[name]
        train, test = data.train[entity.train_slice], data.test[entity.test_slice]
        labels = data.labels[entity.test_slice]
        scores = {}
        for precision in ("float32", "bfloat16"):
            for mode in ("base-only", "full"):
                model = MADCluster(embedder=args.embedder, mode=mode, epochs=args.epochs, stride=10,
                                   random_state=0, precision=precision, validation_size=0)
                started = time.perf_counter()
                model.fit(train)
                fit_s = time.perf_counter() - started
                s = scores[precision, mode] = model.decision_function(test)
                print(json.dumps({
                    "entity": name, "precision": precision, "mode": mode, "fit_s": round(fit_s, 1),
                    "roc_auc": round(float(roc_auc_score(labels, s)), 4),
                    "vus_pr": round(float(vus_pr(s, labels)), 4),
                }), flush=True)
        for mode in ("base-only", "full"):
            rho = spearmanr(scores["float32", mode], scores["bfloat16", mode])[0]
            print(json.dumps({"entity": name, "mode": mode, "spearman_fp32_bf16": round(float(rho), 4)}))


if __name__ == "__main__":
    main()
