"""The benchmark runner: train on a dataset's ``train`` split, score ``test``, evaluate every protocol.

One call of :func:`run_benchmark` is one row of a results table::

    config = BenchmarkConfig(dataset="MSL", embedder="drnn", mode="full", seeds=(0, 1, 2),
                             epochs=5, stride=10)
    result = run_benchmark(config)          # also writes <out>/MSL_drnn_full.json + results.md

What happens, per seed (and per entity with ``per_entity=True``):

1. the dataset is loaded with :func:`madcluster.data.load_dataset` (concatenated series by default;
   ``per_entity`` trains and scores each channel / machine on its own and reports the mean over
   entities, the released code's protocol);
2. the detector is built: ``embedder="drnn"`` (or any registered Base Embedder) is
   :class:`~madcluster.detector.MADCluster` with ``mode`` full / distance-only / cluster-only (the
   paper's ablation rows); ``pca`` and ``kmeans`` are the window baselines of
   :mod:`madcluster.baselines`;
3. ``fit`` on ``train`` (MADCluster's early-stopping validation split is the END of ``train``,
   never test data), then ``decision_function`` on ``test``: one score per test point;
4. thresholds under **every** protocol of :data:`madcluster.evaluation.PROTOCOLS`:
   ``train-quantile`` (contamination of the training scores), ``test-ratio`` and ``combined``
   (with ``anomaly_ratio`` = the dataset's known test anomaly ratio unless given, as the paper does:
   this uses a number computed from the test labels, so it is said in every result), and
   ``best-f1``, which reads the test labels and is labelled ORACLE;
5. the metrics of :func:`madcluster.metrics.evaluate` for each protocol; the continuous-score
   metrics (Range-AUC, VUS, AUC) do not depend on the threshold and are computed once.

Costs recorded per seed: parameter count, MACs per window (``torch.utils.flop_counter`` FLOPs / 2
for torch models, i.e. the matmul-type ops of the GRU / Linear layers; analytic for the
baselines), training and scoring wall time, and peak resident memory (RSS sampled from
``/proc/self/statm`` every 10 ms, minus the RSS at the start of the run; ``tracemalloc`` does not
see torch's allocations). Several seeds give mean and standard deviation of every metric.
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import platform
import resource
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from madcluster.evaluation.thresholds import PROTOCOLS, compute_thresholds

logger = logging.getLogger(__name__)

BASELINES = ("pca", "kmeans")
MODES = ("full", "distance-only", "cluster-only")
BASELINE_MODE = "baseline"  # the "mode" of a PCA / KMeans row (file names, tables)
# metrics that depend on the threshold (computed per protocol) and those that do not (computed once)
THRESHOLD_METRICS = ("f1", "precision", "recall", "aff_precision", "aff_recall")
CONTINUOUS_METRICS = ("range_auc_roc", "range_auc_pr", "vus_roc", "vus_pr", "auc_roc", "auc_pr")
METRICS = THRESHOLD_METRICS + CONTINUOUS_METRICS
ANOMALY_RATIO_NOTE = (
    "test-ratio and combined thresholds use anomaly_ratio = the fraction of anomalous points in the "
    "test labels (as the paper does); this is information from the test labels, though not an oracle "
    "threshold"
)
RESULT_SCHEMA = "madcluster-benchmark/1"


# ================================================================================== configuration
@dataclass
class BenchmarkConfig:
    """Everything that defines one benchmark row. Defaults follow the paper where it says.

    dataset: ``MSL``, ``SMAP``, ``SMD``, ``PSM`` or a folder with train/test files.
    embedder: ``drnn`` (MADCluster with the Dilated RNN; any registered Base Embedder name works),
        ``pca`` or ``kmeans`` (baselines; ``mode`` is ignored for them).
    mode: ``full``, ``distance-only`` (ablation row "DeepSVDD"), ``cluster-only`` ("Clustering").
    seeds: one run per seed; metrics are reported as mean and std over seeds.
    per_entity: train/score each entity (channel / machine) separately, report the mean.
    stride: step between training windows (MADCluster) or between windows (baselines, training
        and scoring); ``None`` = the detector's default (MADCluster 1, baselines window_size // 10).
    contamination: training-score fraction above the ``train-quantile`` threshold.
    anomaly_ratio: alpha of ``test-ratio`` / ``combined``; ``None`` = the dataset's test anomaly
        ratio (uses the test labels' mean, as the paper).
    out: results folder (JSON per row + ``results.md``); ``None`` writes nothing.
    threads: ``torch.set_num_threads`` (``None`` leaves torch's default).
    """

    dataset: str
    embedder: str = "drnn"
    mode: str = "full"
    seeds: tuple[int, ...] = (0,)
    per_entity: bool = False
    entities: tuple[str, ...] | None = None
    epochs: int = 10
    stride: int | None = None
    window_size: int = 100
    batch_size: int = 128
    lr: float = 1e-3
    weight_decay: float = 1e-5
    hidden_size: int = 64
    layers: int = 3
    validation_size: float = 0.2
    patience: int = 3
    n_components: float = 0.95
    n_clusters: int = 20
    contamination: float = 0.01
    anomaly_ratio: float | None = None
    metric_window: int = 100
    data_dir: str | None = None
    out: str | None = "benchmarks/results"
    tag: str | None = None
    device: str = "cpu"
    threads: int | None = None
    verbose: bool = True
    argv: list[str] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.embedder = str(self.embedder).lower()
        self.seeds = tuple(
            int(s) for s in (self.seeds if _is_sequence(self.seeds) else [self.seeds])
        )
        if self.entities is not None:
            self.entities = tuple(str(e) for e in self.entities)
        if not self.seeds:
            raise ValueError("seeds must name at least one seed")
        if len(set(self.seeds)) != len(self.seeds):
            raise ValueError(f"seeds must be distinct, got {list(self.seeds)}")
        if self.is_baseline:
            self.mode = BASELINE_MODE
        else:
            from madcluster.embedders import EMBEDDERS

            if self.embedder not in EMBEDDERS:
                known = ", ".join(sorted(EMBEDDERS) + list(BASELINES))
                raise ValueError(f"unknown embedder {self.embedder!r}; choose one of {known}")
            if self.mode not in MODES:
                raise ValueError(f"unknown mode {self.mode!r}; choose one of {', '.join(MODES)}")
        for name in (
            "epochs",
            "window_size",
            "batch_size",
            "hidden_size",
            "layers",
            "patience",
            "n_clusters",
            "metric_window",
        ):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.stride is not None and (
            not isinstance(self.stride, (int, np.integer)) or self.stride < 1
        ):
            raise ValueError(f"stride must be a positive integer or None, got {self.stride!r}")
        if self.threads is not None and self.threads < 1:
            raise ValueError(f"threads must be >= 1, got {self.threads}")
        if not 0.0 <= self.contamination < 0.5:
            raise ValueError(
                f"contamination must be a fraction in [0, 0.5), got {self.contamination}"
            )
        if self.anomaly_ratio is not None and not 0.0 < self.anomaly_ratio < 0.5:
            raise ValueError(
                f"anomaly_ratio must be a fraction in (0, 0.5), got {self.anomaly_ratio} (1 % is 0.01)"
            )
        if self.tag is not None and not all(c.isalnum() or c in "-." for c in self.tag):
            raise ValueError(f"tag may hold only letters, digits, '-' and '.', got {self.tag!r}")

    @property
    def is_baseline(self) -> bool:
        return self.embedder in BASELINES

    def result_name(self, dataset_name: str | None = None) -> str:
        """``<dataset>_<embedder>_<mode>[_per-entity][_<tag>]``: the JSON file's stem."""
        name = dataset_name or Path(str(self.dataset)).name or str(self.dataset)
        parts = [name, self.embedder, self.mode]
        if self.per_entity:
            parts.append("per-entity")
        if self.tag:
            parts.append(self.tag)
        return "_".join(parts)

    def settings(self) -> dict[str, Any]:
        """The configuration as plain JSON-able values (``argv`` left out: it is recorded apart)."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "argv"}
        out["seeds"] = list(self.seeds)
        out["entities"] = list(self.entities) if self.entities is not None else None
        return out

    def command(self) -> str:
        """The ``madcluster benchmark`` command line that reproduces this configuration."""
        args = [
            "madcluster",
            "benchmark",
            "--dataset",
            str(self.dataset),
            "--embedder",
            self.embedder,
        ]
        if not self.is_baseline:
            args += ["--mode", self.mode]
        args += ["--seeds", *map(str, self.seeds)]
        defaults = BenchmarkConfig(dataset="x")
        skip = {"dataset", "embedder", "mode", "seeds", "argv", "verbose", "per_entity", "entities"}
        if self.is_baseline:
            skip |= {
                "epochs",
                "batch_size",
                "lr",
                "weight_decay",
                "hidden_size",
                "layers",
                "validation_size",
                "patience",
                "device",
            }
        if self.embedder != "pca":
            skip.add("n_components")
        if self.embedder != "kmeans":
            skip.add("n_clusters")
        if self.per_entity:
            args.append("--per-entity")
        if self.entities:
            args += ["--entities", *self.entities]
        for f in fields(self):
            if f.name in skip:
                continue
            value = getattr(self, f.name)
            always = f.name in ("epochs", "stride") and not (
                self.is_baseline and f.name == "epochs"
            )
            if value == getattr(defaults, f.name) and not always:
                continue
            if value is None:
                continue
            args += [f"--{f.name.replace('_', '-')}", str(value)]
        if not self.verbose:
            args.append("--quiet")
        return shlex.join(args)


@dataclass
class BenchmarkResult:
    """What :func:`run_benchmark` returns; ``to_dict()`` is the JSON written to ``<out>/<name>.json``."""

    name: str
    config: BenchmarkConfig
    summary: dict[
        str, dict[str, Any]
    ]  # protocol -> {"oracle", "description", "metrics": {key: {mean, std, values}}}
    runs: list[dict[str, Any]]  # one per seed
    data: dict[str, Any]
    cost: dict[str, Any]
    provenance: dict[str, Any]
    path: Path | None = None

    def metric(self, protocol: str, key: str) -> float:
        """Mean over seeds of one metric under one protocol."""
        return float(self.summary[protocol]["metrics"][key]["mean"])

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": RESULT_SCHEMA,
            "name": self.name,
            "dataset": self.data["name"],
            "embedder": self.config.embedder,
            "mode": self.config.mode,
            "per_entity": self.config.per_entity,
            "seeds": list(self.config.seeds),
            "command": self.provenance["command"],
            "anomaly_ratio_note": ANOMALY_RATIO_NOTE,
            "protocols": self.summary,
            "threshold_independent_metrics": list(CONTINUOUS_METRICS),
            "cost": self.cost,
            "data": self.data,
            "settings": self.config.settings(),
            "provenance": self.provenance,
            "runs": self.runs,
        }


# ================================================================================== the run
def run_benchmark(config: BenchmarkConfig) -> BenchmarkResult:
    """Train, score and evaluate ``config`` for every seed; write the JSON and Markdown if ``out``."""
    if config.threads is None:
        return _run_benchmark(config)
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(int(config.threads))
    try:
        return _run_benchmark(config)
    finally:
        torch.set_num_threads(previous)


def _run_benchmark(config: BenchmarkConfig) -> BenchmarkResult:
    from tqdm.auto import tqdm

    from madcluster.data.datasets import load_dataset

    dataset = load_dataset(config.dataset, data_dir=config.data_dir)
    anomaly_ratio = (
        config.anomaly_ratio if config.anomaly_ratio is not None else dataset.anomaly_ratio
    )
    if not 0.0 < anomaly_ratio < 0.5:
        raise ValueError(
            f"{dataset.name}: test anomaly ratio {anomaly_ratio:.4f} is outside (0, 0.5); pass anomaly_ratio explicitly"
        )
    parts = _parts(dataset, config)
    name = config.result_name(dataset.name)
    provenance = _provenance(config)

    runs = []
    bar = tqdm(
        total=len(config.seeds) * len(parts),
        desc=name,
        unit="fit",
        disable=not config.verbose or len(config.seeds) * len(parts) == 1,
    )
    for seed in config.seeds:
        entity_runs = []
        for part in parts:
            bar.set_postfix(seed=seed, entity=part.name.split("/")[-1])
            entity_runs.append(
                _run_one(
                    part,
                    config,
                    seed,
                    anomaly_ratio,
                    show_epochs=config.verbose and len(parts) == 1,
                )
            )
            bar.update()
        runs.append(_seed_record(seed, entity_runs, config.per_entity))
    bar.close()

    summary = _summarise(runs)
    cost = _cost_summary(runs)
    data = {
        "name": dataset.name,
        "n_train": len(dataset.train),
        "n_test": len(dataset.test),
        "n_features": dataset.n_features,
        "n_entities": len(dataset.entities),
        "n_entities_run": len(parts),
        "test_anomaly_ratio": dataset.anomaly_ratio,
        "anomaly_ratio_used": float(anomaly_ratio),
        "anomaly_ratio_source": "given"
        if config.anomaly_ratio is not None
        else "test labels (known ratio, as the paper)",
    }
    result = BenchmarkResult(name, config, summary, runs, data, cost, provenance)
    if config.out is not None:
        from madcluster.evaluation.report import write_result

        result.path = write_result(result, config.out)
    return result


@dataclass
class _Part:
    name: str
    train: np.ndarray
    test: np.ndarray
    labels: np.ndarray


def _parts(dataset: Any, config: BenchmarkConfig) -> list[_Part]:
    if not config.per_entity:
        if config.entities:
            raise ValueError("entities selects entities for per_entity=True runs only")
        return [_Part(dataset.name, dataset.train, dataset.test, dataset.labels)]
    chosen = (
        [dataset.entity(e) for e in config.entities]
        if config.entities
        else list(dataset.iter_entities())
    )
    return [_Part(d.name, d.train, d.test, d.labels) for d in chosen]


def build_detector(config: BenchmarkConfig, seed: int, *, verbose: bool = False) -> Any:
    """The detector of ``config`` for one seed (MADCluster or a baseline)."""
    if config.embedder == "pca":
        from madcluster.baselines import PCADetector

        return PCADetector(
            window_size=config.window_size,
            n_components=config.n_components,
            stride=config.stride,
            contamination=config.contamination,
            random_state=seed,
        )
    if config.embedder == "kmeans":
        from madcluster.baselines import KMeansDetector

        return KMeansDetector(
            window_size=config.window_size,
            n_clusters=config.n_clusters,
            stride=config.stride,
            contamination=config.contamination,
            random_state=seed,
        )
    from madcluster.detector import MADCluster

    params = (
        {"hidden_size": config.hidden_size, "n_layers": config.layers}
        if config.embedder == "drnn"
        else None
    )
    return MADCluster(
        embedder=config.embedder,
        embedder_params=params,
        window_size=config.window_size,
        stride=config.stride or 1,
        epochs=config.epochs,
        batch_size=config.batch_size,
        lr=config.lr,
        weight_decay=config.weight_decay,
        validation_size=config.validation_size,
        patience=config.patience,
        mode=config.mode,
        contamination=config.contamination,
        random_state=seed,
        device=config.device,
        verbose=verbose,
    )


def _run_one(
    part: _Part, config: BenchmarkConfig, seed: int, anomaly_ratio: float, *, show_epochs: bool
) -> dict[str, Any]:
    """Fit, score and evaluate one (entity, seed)."""
    record: dict[str, Any] = {
        "name": part.name,
        "n_train": len(part.train),
        "n_test": len(part.test),
        "test_anomaly_ratio": float(part.labels.mean()),
    }
    if len(part.train) < config.window_size or len(part.test) < config.window_size:
        record["skipped"] = f"shorter than one window ({config.window_size})"
        return record
    detector = build_detector(config, seed, verbose=show_epochs)
    with _PeakRSS() as memory:
        t0 = time.perf_counter()
        detector.fit(part.train)
        t1 = time.perf_counter()
        scores = detector.decision_function(part.test)
        t2 = time.perf_counter()
    if scores.shape != (len(part.test),):
        raise RuntimeError(f"{part.name}: {scores.shape} scores for {len(part.test)} test points")
    record.update(
        train_seconds=t1 - t0,
        score_seconds=t2 - t1,
        peak_rss_mb=memory.peak_mb,
        n_scores=len(scores),
    )
    record.update(_model_cost(detector, config))
    if not config.is_baseline:
        record["history"] = _history_summary(detector.history_)
    if part.labels.min() == part.labels.max():
        record["skipped"] = "test labels are all one class: metrics undefined"
        return record
    thresholds = compute_thresholds(
        detector.decision_scores_,
        scores,
        part.labels,
        contamination=config.contamination,
        anomaly_ratio=anomaly_ratio,
    )
    record["thresholds"] = {k: v.value for k, v in thresholds.items()}
    record["metrics"] = evaluate_protocols(
        scores,
        part.labels,
        {k: v.value for k, v in thresholds.items()},
        window=config.metric_window,
    )
    return record


def evaluate_protocols(
    scores: np.ndarray, labels: np.ndarray, thresholds: dict[str, float], *, window: int = 100
) -> dict[str, dict[str, float]]:
    """Every metric for each protocol's threshold; the continuous-score ones are computed once."""
    from madcluster.metrics import evaluate
    from madcluster.metrics.affiliation import affiliation_precision_recall
    from madcluster.metrics.pointwise import precision_recall_f1

    out: dict[str, dict[str, float]] = {}
    shared: dict[str, float] | None = None
    for protocol, threshold in thresholds.items():
        if shared is None:
            full = evaluate(scores, labels, threshold=threshold, window=window)
            shared = {k: full[k] for k in CONTINUOUS_METRICS}
            out[protocol] = {k: float(full[k]) for k in METRICS}
            continue
        pred = np.asarray(scores, dtype=np.float64) > threshold
        p, r, f = precision_recall_f1(pred, labels)
        aff_p, aff_r = affiliation_precision_recall(pred, labels)
        out[protocol] = {
            "f1": f,
            "precision": p,
            "recall": r,
            "aff_precision": aff_p,
            "aff_recall": aff_r,
            **shared,
        }
        out[protocol] = {k: float(out[protocol][k]) for k in METRICS}
    return out


def _seed_record(seed: int, entity_runs: list[dict[str, Any]], per_entity: bool) -> dict[str, Any]:
    """One seed: the metrics (mean over entities when per-entity) and summed costs."""
    scored = [r for r in entity_runs if "metrics" in r]
    if not scored:
        raise ValueError(
            "no entity could be evaluated: "
            + "; ".join(f"{r['name']}: {r.get('skipped')}" for r in entity_runs)
        )
    protocols = list(scored[0]["metrics"])
    metrics = {}
    for p in protocols:
        metrics[p] = {}
        for k in METRICS:
            values = np.array([r["metrics"][p][k] for r in scored], dtype=np.float64)
            metrics[p][k] = float(np.nanmean(values)) if np.isfinite(values).any() else float("nan")
    timed = [r for r in entity_runs if "train_seconds" in r]
    record: dict[str, Any] = {
        "seed": seed,
        "metrics": metrics,
        "train_seconds": float(sum(r["train_seconds"] for r in timed)),
        "score_seconds": float(sum(r["score_seconds"] for r in timed)),
        "peak_rss_mb": float(max(r["peak_rss_mb"] for r in timed)),
        "n_params": timed[0]["n_params"],
        "macs_per_window": timed[0]["macs_per_window"],
        "macs_method": timed[0]["macs_method"],
    }
    if "history" in timed[0]:
        record["history"] = (
            timed[0]["history"]
            if not per_entity
            else {
                "epochs_run_mean": float(np.mean([r["history"]["epochs_run"] for r in timed])),
                "final_nu_mean": float(np.mean([r["history"]["final_nu"] for r in timed])),
                "final_radius_mean": float(np.mean([r["history"]["final_radius"] for r in timed])),
            }
        )
    if per_entity:
        nan_aff = {
            p: int(sum(1 for r in scored if math.isnan(r["metrics"][p]["aff_precision"])))
            for p in protocols
        }
        record["n_entities_scored"] = len(scored)
        record["aff_precision_nan_entities"] = nan_aff  # nothing predicted: left out of the mean
        record["entities"] = entity_runs
    else:
        record.update(
            {
                k: v
                for k, v in entity_runs[0].items()
                if k in ("thresholds", "history", "n_scores", "n_params_embedder", "n_params_head")
            }
        )
    return record


def _summarise(runs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    summary = {}
    for p in runs[0]["metrics"]:
        proto = PROTOCOLS[p]
        metrics = {}
        for k in METRICS:
            values = [r["metrics"][p][k] for r in runs]
            arr = np.array(values, dtype=np.float64)
            ok = arr[np.isfinite(arr)]
            metrics[k] = {
                "mean": float(ok.mean()) if ok.size else float("nan"),
                "std": float(ok.std(ddof=1)) if ok.size > 1 else 0.0,
                "values": values,
            }
        summary[p] = {
            "oracle": proto.oracle,
            "label": f"{p} (ORACLE)" if proto.oracle else p,
            "description": proto.description,
            "metrics": metrics,
        }
    return summary


def _cost_summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    def stat(key: str) -> dict[str, float]:
        arr = np.array([r[key] for r in runs], dtype=np.float64)
        return {"mean": float(arr.mean()), "std": float(arr.std(ddof=1)) if len(arr) > 1 else 0.0}

    out = {
        "n_params": runs[0]["n_params"],
        "macs_per_window": runs[0]["macs_per_window"],
        "macs_method": runs[0]["macs_method"],
        "train_seconds": stat("train_seconds"),
        "score_seconds": stat("score_seconds"),
        "peak_rss_mb": stat("peak_rss_mb"),
        "peak_rss_method": "RSS sampled from /proc/self/statm every 10 ms during fit + score, minus the RSS at the start",
        "process_max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
    }
    if "history" in runs[0]:
        h = [r["history"] for r in runs]
        keys = [k for k in h[0] if isinstance(h[0][k], (int, float))]
        out["history"] = {k: float(np.mean([x[k] for x in h])) for k in keys}
    return out


def _history_summary(history: dict[str, list[float]]) -> dict[str, Any]:
    val = np.asarray(history["val_loss"], dtype=np.float64)
    best = int(np.nanargmin(val)) + 1 if np.isfinite(val).any() else len(val)
    return {
        "epochs_run": len(history["epoch"]),
        "best_epoch": best,  # the restored state (lowest validation loss)
        "final_nu": float(history["nu"][-1]),
        "final_radius": float(history["radius"][-1]),
        "best_nu": float(history["nu"][best - 1]),
        "best_radius": float(history["radius"][best - 1]),
        "final_train_loss": float(history["train_loss"][-1]),
        "best_val_loss": float(val[best - 1]) if np.isfinite(val).any() else float("nan"),
        "seconds_per_epoch": float(np.mean(history["seconds"])),
        "nu": [float(v) for v in history["nu"]],
        "radius": [float(v) for v in history["radius"]],
        "train_loss": [float(v) for v in history["train_loss"]],
        "val_loss": [float(v) for v in history["val_loss"]],
    }


# ================================================================================== costs
def _model_cost(detector: Any, config: BenchmarkConfig) -> dict[str, Any]:
    """Parameters and multiply-accumulates per window of ``window_size`` steps."""
    if hasattr(detector, "net_"):
        return torch_model_cost(detector.net_, config.window_size, detector.n_features_in_)
    dim = config.window_size * detector.n_features_in_
    if hasattr(detector, "components_"):  # PCA: one (L*D) x (k + 1) product per window
        k = int(detector.n_components_)
        return {
            "n_params": int(k * dim + dim),
            "macs_per_window": int(dim * (k + 1)),
            "macs_method": "analytic: window vector (L*D) times the k components and the mean",
        }
    k = int(detector.cluster_centers_.shape[0])  # KMeans: one (L*D) x k product per window
    return {
        "n_params": int(k * dim),
        "macs_per_window": int(dim * k),
        "macs_method": "analytic: window vector (L*D) times the k centroids",
    }


def torch_model_cost(net: Any, window_size: int, n_features: int) -> dict[str, Any]:
    """Parameter count and MACs of one window through the embedder and the MADCluster score.

    MACs = FLOPs / 2 from ``torch.utils.flop_counter.FlopCounterMode``, which counts the
    matrix-multiply ops (the GRU's input and hidden projections, Linear layers); element-wise
    work (gates, cosine, distances) is not counted.
    """
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    device = next(net.parameters()).device
    x = torch.zeros(1, window_size, n_features, device=device)
    was_training = net.training
    net.eval()
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        net.score(x)
    net.train(was_training)
    n_embedder = sum(p.numel() for p in net.embedder.parameters())
    n_total = sum(p.numel() for p in net.parameters())
    return {
        "n_params": int(n_total),
        "n_params_embedder": int(n_embedder),
        "n_params_head": int(n_total - n_embedder),
        "macs_per_window": int(counter.get_total_flops() // 2),
        "macs_method": "torch.utils.flop_counter.FlopCounterMode FLOPs / 2 (matmul ops of GRU / Linear layers), one window [1, L, D]",
    }


class _PeakRSS:
    """Peak resident memory above the level at entry, by sampling ``/proc/self/statm``.

    ``tracemalloc`` misses torch's C++ allocations and ``ru_maxrss`` is a process-wide high-water
    mark (useless for the second seed in one process), so a background thread samples the RSS.
    Off Linux it falls back to the ``ru_maxrss`` increase.
    """

    def __init__(self, interval: float = 0.01) -> None:
        self.interval = interval
        self.peak_mb = 0.0
        self._stop = threading.Event()
        self._page = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096

    def _rss(self) -> int | None:
        try:
            with open("/proc/self/statm", "rb") as fh:
                return int(fh.read().split()[1]) * self._page
        except (OSError, ValueError, IndexError):
            return None

    def _sample(self) -> None:
        while not self._stop.wait(self.interval):
            rss = self._rss()
            if rss is not None and rss > self._peak:
                self._peak = rss

    def __enter__(self) -> _PeakRSS:  # noqa: PYI034
        self._start = self._rss()
        self._max0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        self._peak = self._start or 0
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        if self._start is not None:
            final = self._rss() or 0
            self.peak_mb = (max(self._peak, final) - self._start) / 2**20
        else:  # ru_maxrss is in KiB on Linux, bytes on macOS
            scale = 1 if sys.platform == "darwin" else 1024
            self.peak_mb = (
                (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - self._max0) * scale / 2**20
            )


# ================================================================================== provenance
def _provenance(config: BenchmarkConfig) -> dict[str, Any]:
    import torch

    import madcluster

    return {
        "command": config.command(),
        "argv": list(config.argv) if config.argv is not None else None,
        "git": git_state(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "madcluster": getattr(madcluster, "__version__", None),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "numpy": np.__version__,
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
    }


def git_state(cwd: str | os.PathLike | None = None) -> dict[str, Any]:
    """``git rev-parse HEAD`` and whether tracked files (or untracked ones under src/) differ from it."""
    where = Path(cwd) if cwd is not None else Path(__file__).resolve().parent

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", *args], cwd=where, capture_output=True, text=True, timeout=20, check=True
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout

    commit = git("rev-parse", "HEAD")
    if commit is None:
        return {"commit": None, "dirty": None, "dirty_files": []}
    status = git("status", "--porcelain", "--", ":/src") or ""
    tracked = git("status", "--porcelain", "--untracked-files=no") or ""
    files = sorted({line[3:] for line in (status + tracked).splitlines() if line.strip()})
    return {"commit": commit.strip(), "dirty": bool(files), "dirty_files": files}


# ================================================================================== command line
def add_benchmark_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``madcluster benchmark`` (the CLI calls this on its sub-parser)."""
    from madcluster.embedders import EMBEDDERS

    lines = [
        "Threshold protocols (every one is computed and reported; predictions are score > threshold):",
    ]
    for p in PROTOCOLS.values():
        lines.append(f"  {p.name + (' (ORACLE)' if p.oracle else ''):<24} {p.description}")
    lines += [
        "",
        "test-ratio and combined use alpha = the dataset's known test anomaly ratio unless",
        "--anomaly-ratio is given (as the paper does): a number taken from the test labels.",
        "best-f1 reads the test labels to pick the threshold: an ORACLE, never a deployable result.",
        "Continuous-score metrics (R_A_R, R_A_P, V_ROC, V_PR, AUC) do not depend on the threshold.",
        "",
        "Writes <out>/<dataset>_<embedder>_<mode>[_per-entity][_<tag>].json and regenerates",
        "<out>/results.md from every JSON in <out>.",
    ]
    parser.epilog = "\n".join(lines)
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    names = ", ".join(sorted(EMBEDDERS) + list(BASELINES))

    g = parser.add_argument_group("what to run")
    g.add_argument(
        "--dataset",
        required=True,
        help="MSL, SMAP, SMD, PSM (any case) or a folder with train/test files",
    )
    g.add_argument(
        "--embedder",
        default="drnn",
        help=f"{names}: drnn = MADCluster with the Dilated RNN; pca / kmeans = window baselines (default: drnn)",
    )
    g.add_argument(
        "--mode",
        default="full",
        choices=list(MODES),
        help="MADCluster objective: full, or the paper's ablations distance-only (row 'DeepSVDD') and cluster-only (row 'Clustering') (default: full; ignored by baselines)",
    )
    g.add_argument(
        "--seeds",
        type=int,
        nargs="+",
        default=[0],
        help="one run per seed; mean and std over seeds (default: 0)",
    )
    g.add_argument(
        "--per-entity",
        action="store_true",
        help="train and score each channel / machine separately and report the mean over entities (default: the concatenated series, as the paper's dataset table)",
    )
    g.add_argument(
        "--entities",
        nargs="+",
        default=None,
        help="with --per-entity: only these entities (names from entities.csv)",
    )
    g.add_argument(
        "--data-dir",
        default=None,
        help="data directory (default: $MADCLUSTER_DATA_DIR, else ../shared/datasets)",
    )
    g.add_argument(
        "--out",
        default="benchmarks/results",
        help="results folder; 'none' writes nothing (default: benchmarks/results)",
    )
    g.add_argument(
        "--tag",
        default=None,
        help="suffix of the result name, to keep variants apart (letters, digits, '-', '.')",
    )

    t = parser.add_argument_group("model and training")
    t.add_argument(
        "--epochs",
        type=int,
        default=10,
        help="maximum epochs; early stopping on the END of the training series, never test (default: 10)",
    )
    t.add_argument(
        "--stride",
        type=int,
        default=None,
        help="step between training windows (MADCluster; default 1) or between windows (baselines; default window-size // 10)",
    )
    t.add_argument(
        "--window-size", type=int, default=100, help="window length L (default: 100, as the paper)"
    )
    t.add_argument("--batch-size", type=int, default=128, help="windows per batch (default: 128)")
    t.add_argument("--lr", type=float, default=1e-3, help="Adam learning rate (default: 1e-3)")
    t.add_argument(
        "--weight-decay",
        type=float,
        default=1e-5,
        help="Adam weight decay, lambda * Omega(W) (default: 1e-5)",
    )
    t.add_argument("--hidden-size", type=int, default=64, help="D-RNN hidden size f (default: 64)")
    t.add_argument(
        "--layers", type=int, default=3, help="D-RNN layers, dilations 1, 2, 4, ... (default: 3)"
    )
    t.add_argument(
        "--validation-size",
        type=float,
        default=0.2,
        help="fraction at the end of train for early stopping (default: 0.2)",
    )
    t.add_argument(
        "--patience",
        type=int,
        default=3,
        help="epochs without validation improvement before stopping (default: 3)",
    )
    t.add_argument(
        "--n-components",
        type=float,
        default=0.95,
        help="pca: variance fraction kept (default: 0.95)",
    )
    t.add_argument(
        "--n-clusters", type=int, default=20, help="kmeans: number of centroids (default: 20)"
    )
    t.add_argument("--device", default="cpu", help="cpu, cuda or auto (default: cpu)")
    t.add_argument(
        "--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)"
    )

    e = parser.add_argument_group("thresholds and metrics")
    e.add_argument(
        "--contamination",
        type=float,
        default=0.01,
        help="train-quantile: fraction of training scores above the threshold (default: 0.01)",
    )
    e.add_argument(
        "--anomaly-ratio",
        type=float,
        default=None,
        help="alpha of test-ratio / combined as a fraction (0.01 = 1%%) (default: the dataset's test anomaly ratio, from the labels)",
    )
    e.add_argument(
        "--metric-window", type=int, default=100, help="Range-AUC / VUS window (default: 100)"
    )
    if not any("--quiet" in a.option_strings for a in parser._actions):
        e.add_argument("--quiet", action="store_true", help="no progress bars")


def config_from_args(args: argparse.Namespace) -> BenchmarkConfig:
    """A :class:`BenchmarkConfig` from parsed ``madcluster benchmark`` arguments."""
    out = getattr(args, "out", "benchmarks/results")
    return BenchmarkConfig(
        dataset=args.dataset,
        embedder=args.embedder,
        mode=args.mode,
        seeds=tuple(args.seeds),
        per_entity=bool(args.per_entity),
        entities=tuple(args.entities) if args.entities else None,
        epochs=args.epochs,
        stride=args.stride,
        window_size=args.window_size,
        batch_size=args.batch_size,
        lr=args.lr,
        weight_decay=args.weight_decay,
        hidden_size=args.hidden_size,
        layers=args.layers,
        validation_size=args.validation_size,
        patience=args.patience,
        n_components=args.n_components,
        n_clusters=args.n_clusters,
        contamination=args.contamination,
        anomaly_ratio=args.anomaly_ratio,
        metric_window=args.metric_window,
        data_dir=args.data_dir,
        out=None if out is None or str(out).lower() == "none" else out,
        tag=args.tag,
        device=args.device,
        threads=args.threads,
        verbose=not getattr(args, "quiet", False),
        argv=list(sys.argv),
    )


def run_benchmark_command(args: argparse.Namespace) -> int:
    """``madcluster benchmark``: run, write the results and print the summary table."""
    from madcluster.evaluation.report import format_summary

    config = config_from_args(args)
    result = run_benchmark(config)
    print(format_summary(result))
    if result.path is not None:
        print(f"results written to {result.path} (and {Path(result.path).parent / 'results.md'})")
    return 0


# ================================================================================== helpers
def _is_sequence(value: Any) -> bool:
    return (
        isinstance(value, Sequence)
        and not isinstance(value, (str, bytes))
        or isinstance(value, (np.ndarray, Iterator))
    )


__all__ = [
    "ANOMALY_RATIO_NOTE",
    "BenchmarkConfig",
    "BenchmarkResult",
    "add_benchmark_arguments",
    "build_detector",
    "config_from_args",
    "evaluate_protocols",
    "git_state",
    "run_benchmark",
    "run_benchmark_command",
    "torch_model_cost",
]
