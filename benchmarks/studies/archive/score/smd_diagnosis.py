"""A post-hoc look at single SMD machines: ROC-AUC of MADCluster variants, of each score term, and of PCA.

SMD is *unseen* data for this project (defaults are chosen on the synthetic suite and MSL only), so
what this prints is a lead to check on the development set, never a reason to change a default.

    MADCLUSTER_DATA_DIR=../shared/datasets python benchmarks/studies/archive/score/smd_diagnosis.py \\
        --machines machine-1-3 machine-3-4 \\
        --variants pca '{"stride":50}' '{"stride":50,"roughness_window":0}' \\
                   '{"stride":50,"validation_size":0}' '{"stride":50,"clip":3}' '{"stride":50,"clip":10}'

A variant is ``pca`` or a JSON dict of ``MADCluster`` parameters (``window_size=100``,
``random_state=0`` unless given); ``"clip": c`` soft-clips the scaled input to +-c standard
deviations (``c * tanh(z / c)``, not a library option: a probe of whether extreme inputs are the
problem). One torch thread.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from collections.abc import Iterator

import numpy as np
import torch
from sklearn.metrics import roc_auc_score

from madcluster import MADCluster, PCADetector
from madcluster.data.datasets import load_dataset
from madcluster.data.features import roughness
from madcluster.estimator import detector as detector_module
from madcluster.estimator import fitted as fitted_module
from madcluster.score.scoring import combine_scores


@contextlib.contextmanager
def clipped_input(clip: float) -> Iterator[None]:
    """Within the block, the estimator's scaled input is soft-clipped to +-``clip`` before its
    roughness channels (scaled with the training statistics of the unclipped input's roughness):
    a diagnostic probe only, swapped in where fit and the fitted model build their input."""
    if not clip:
        yield
        return

    def clipped(data: np.ndarray, mean: np.ndarray, scale: np.ndarray, window: int) -> np.ndarray:
        d = data.shape[1]
        z = clip * np.tanh(((data - mean[:d]) / scale[:d]) / clip)
        if window:
            z = np.concatenate([z, (roughness(z, window) - mean[d:]) / scale[d:]], axis=1)
        return z.astype(np.float32)

    modules = (detector_module, fitted_module)
    saved = [m.model_input for m in modules]
    for m in modules:
        m.model_input = clipped
    try:
        yield
    finally:
        for m, original in zip(modules, saved):
            m.model_input = original


def run_variant(variant: str, train: np.ndarray, test: np.ndarray, labels: np.ndarray) -> dict:
    if variant == "pca":
        scores = PCADetector(window_size=100).fit(train).decision_function(test)
        return {"auc": roc_auc_score(labels, scores)}
    params = {"window_size": 100, "random_state": 0, **json.loads(variant)}
    clip = params.pop("clip", 0.0)
    with clipped_input(clip):
        det = MADCluster(**params).fit(train)
        terms = det.score_terms(test)
    out = {"auc": roc_auc_score(labels, combine_scores(terms, det.score_stats_, det.score_scaling, det.base_score_combination))}
    out.update({f"auc_{name}": roc_auc_score(labels, values) for name, values in terms.items()})
    out["epochs_run"] = len(det.history_.get("epoch", []))
    return out


def input_extremes(train: np.ndarray, test: np.ndarray, labels: np.ndarray) -> dict:
    """How far normal test steps go outside the training range, in training standard deviations
    (the detector's default scaling): channels with a tiny training spread can dominate."""
    sd = train.std(axis=0)
    z = np.abs(test - train.mean(axis=0)) / np.where(sd > 1e-8, sd, 1.0)
    normal = np.asarray(labels) == 0
    return {
        "channels_train_sd_below_1e-3": int(((sd > 1e-8) & (sd < 1e-3)).sum()),
        "max_abs_z_normal_test": round(float(z[normal].max()), 1),
        "max_abs_z_anomalous_test": round(float(z[~normal].max()), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--machines", nargs="+", required=True, help="SMD entity names, e.g. machine-1-3")
    parser.add_argument("--variants", nargs="*", default=["pca", "{}"], help="pca or JSON MADCluster params")
    args = parser.parse_args()
    torch.set_num_threads(1)
    smd = load_dataset("SMD")
    for machine in args.machines:
        entity = smd.entity(machine)
        print(json.dumps({"machine": machine, **input_extremes(entity.train, entity.test, entity.labels)}), flush=True)
        for variant in args.variants:
            t0 = time.perf_counter()
            result = run_variant(variant, entity.train, entity.test, entity.labels)
            rounded = {k: round(v, 3) if isinstance(v, float) else v for k, v in result.items()}
            print(json.dumps({"machine": machine, "variant": variant, **rounded,
                              "seconds": round(time.perf_counter() - t0, 1)}), flush=True)


if __name__ == "__main__":
    main()
