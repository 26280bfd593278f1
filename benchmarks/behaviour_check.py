"""Behaviour check for refactors: every score, parameter set and fingerprint must stay identical.

Fits a handful of small configurations with fixed seeds on small synthetic data and compares
their decision scores, training scores, thresholds, embeddings, resolved parameters and the
benchmark's task fingerprints (the resume key, including those of every stored result in
benchmarks/results) with a reference recorded from the code before the change.

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/behaviour_check.py            # compare
    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/behaviour_check.py --record   # new reference

Exit status 0 when everything matches, 1 otherwise, with each difference listed. Parameters and
fingerprints must match exactly; scores to ``PORTABLE_RTOL`` of each array's largest |value|
(``--strict``: 1e-10, for a refactor checked in the environment the reference records). Why not
strict by default: KMeans, ridge and PCA solves differ in the sixth digit between numpy / scipy /
scikit-learn / BLAS builds (up to 5.1e-6 of the scale, PCA, between the recording and a fresh
install; the network's scores match exactly), while a change of behaviour moves scores by far
more. The reference records its environment; the check prints where it differs. Seconds on one thread.
"""

from __future__ import annotations

import argparse
import glob
import importlib
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "tests" / "behaviour_reference.json"
STRICT_RTOL = 1e-10  # the recorded environment: scores are bit-for-bit up to printing
PORTABLE_RTOL = 1e-5  # another environment: relative to the largest |value| of each array
TINY = {"window_size": 16, "epochs": 2, "batch_size": 32, "random_state": 0, "device": "cpu"}


def _series(seed: int, n: int, d: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n)[:, None]
    return (np.sin(t / (5.0 + np.arange(d))) + 0.1 * rng.standard_normal((n, d))).astype(np.float64)


def _with_few_valued(rows: np.ndarray, seed: int) -> np.ndarray:
    """``rows`` with two status columns of two and three values beside them (the default's rule
    and weights follow the share of such columns)."""
    rng = np.random.default_rng(seed)
    status = np.stack([rng.integers(0, 2, len(rows)), rng.integers(0, 3, len(rows))], axis=1)
    return np.hstack([rows, status.astype(np.float64)])


def _digest(values: np.ndarray) -> list[float]:
    """The values to 12 significant digits (the comparison's tolerance is 1e-10 relative)."""
    return [float(f"{v:.12g}") for v in np.asarray(values, dtype=np.float64).ravel()]


def _detector_cases() -> dict[str, Any]:
    from madcluster.baselines import KMeansDetector, PCADetector
    from madcluster.estimator.detector import MADCluster

    return {
        "default_drnn": lambda: MADCluster(**TINY),
        "default_drnn_few_valued": lambda: MADCluster(**TINY),  # on rows with status columns
        # test rows that continue the training rows' time, 30 of them reversed (the others
        # restart it: each test subsequence has its twin in training, and at once the discord
        # part reads nothing there)
        "default_drnn_reversed": lambda: MADCluster(**TINY),
        "paper_preset": lambda: MADCluster.from_preset("paper", **TINY),
        "usad_base_only": lambda: MADCluster(embedder="usad", mode="base-only", **TINY),
        "usad_full": lambda: MADCluster(embedder="usad", **TINY),
        "drnn_k2": lambda: MADCluster(n_clusters=2, **TINY),
        "drnn_minmax_rough0": lambda: MADCluster(scaling="minmax", roughness_window=0, **TINY),
        "pca": lambda: PCADetector(window_size=16, random_state=0),
        "kmeans": lambda: KMeansDetector(window_size=16, random_state=0, **_kmeans_size(KMeansDetector, 4)),
    }


def _kmeans_size(cls: type, k: int) -> dict[str, int]:
    """The KMeans baseline's number of centroids, whatever the parameter is called."""
    import inspect

    names = inspect.signature(cls).parameters
    return {"n_centroids": k} if "n_centroids" in names else {"n_clusters": k}


def _comparable_params(params: dict[str, Any]) -> dict[str, Any]:
    """``get_params()`` as JSON, the embedder's parameters completed with its signature's defaults
    (``embedder_params=None`` and the defaults spelt out build the same embedder)."""
    import inspect

    from madcluster.embedders import EMBEDDERS

    params = dict(params)
    if isinstance(params.get("embedder"), str) and params["embedder"] in EMBEDDERS:
        signature = inspect.signature(EMBEDDERS[params["embedder"]]).parameters
        defaults = {k: p.default for k, p in signature.items() if p.default is not inspect.Parameter.empty}
        defaults.pop("window_size", None)  # the estimator's window size reaches it
        params["embedder_params"] = {**defaults, **(params.get("embedder_params") or {})}
    out = {}
    for key, value in params.items():
        if key == "n_centroids":
            key = "n_clusters"  # the KMeans baseline's renamed centroid count
        out[key] = value if isinstance(value, (int, float, str, bool, type(None), dict, list)) else repr(value)
    return out


def detector_results() -> dict[str, Any]:
    from madcluster.estimator.detector import MADCluster
    from madcluster.estimator.fitted import embed

    out: dict[str, Any] = {}
    for name, make in _detector_cases().items():
        if name.endswith("_few_valued"):
            train, test = _with_few_valued(_series(0, 400), 2), _with_few_valued(_series(1, 200), 3)
        elif name.endswith("_reversed"):
            train, test = _series(0, 400), _series(1, 600)[400:].copy()
            test[100:130] = test[100:130][::-1].copy()
        else:
            train, test = _series(0, 400), _series(1, 200)
        detector = make().fit(train)
        entry = {
            "params": _comparable_params(detector.get_params()),
            "scores": _digest(detector.decision_function(test)),
            "train_scores": _digest(detector.decision_scores_),
            "threshold": float(detector.threshold_),
        }
        if isinstance(detector, MADCluster):
            entry["embed"] = _digest(embed(detector.model_, test[:32]))
            if detector.model_.grid.causal and detector.n_clusters == 1:  # what a stream answers
                entry["at_once_scores"] = _digest(detector.stream().update(test).scores)
            with tempfile.TemporaryDirectory() as folder:
                path = Path(folder) / "m.mcz"
                detector.save(path)
                entry["loaded_scores"] = _digest(MADCluster.load(path).decision_function(test))
        out[name] = entry
    return out


def _cli_params(argv: list[str]) -> dict[str, Any]:
    """The detector parameters ``madcluster fit`` builds from ``argv``."""
    from madcluster.cli import build_parser

    args = build_parser().parse_args(["fit", "x.csv", "-o", "m.mcz", *argv])
    try:
        from madcluster.cli.options import detector_from_args
    except ImportError:  # before the refactor
        from madcluster.cli.options import _detector_from_args as detector_from_args
    threads = torch.get_num_threads()
    try:
        params = detector_from_args(args).get_params()
    finally:
        torch.set_num_threads(threads)
    return _comparable_params(params)


def cli_results() -> dict[str, Any]:
    cases = {
        "fit_defaults": [],
        "fit_paper": ["--preset", "paper"],
        "fit_usad": ["--embedder", "usad", "--window-size", "32", "--mode", "base-only"],
        "fit_flags": ["--hidden-size", "16", "--layers", "2", "--embedder-param", "hidden_size=8",
                      "--roughness-window", "0", "--epochs", "3", "--stride", "2", "--seed", "5"],
    }
    return {name: _cli_params(argv) for name, argv in cases.items()}


def _benchmark_imports():
    """``BenchmarkConfig`` and ``(config, seed) -> detector``, wherever the code keeps them."""
    for package in ("madcluster.benchmark", "madcluster.evaluation"):
        try:
            config = importlib.import_module(f"{package}.config")
            fit_score = importlib.import_module(f"{package}.fit_score")
        except ImportError:
            continue
        if hasattr(fit_score, "detector_params"):
            from madcluster.factory import make_detector

            describe = fit_score.detector_params
            return config.BenchmarkConfig, lambda c, seed, describe=describe: make_detector(describe(c, seed))
        return config.BenchmarkConfig, fit_score.build_detector
    raise ImportError("no BenchmarkConfig found")


def benchmark_results() -> dict[str, Any]:
    """Fingerprints and detectors of benchmark rows, and the fingerprints of stored results."""
    BenchmarkConfig, build_detector = _benchmark_imports()
    rows = {
        "drnn": {"dataset": "MSL"},
        "usad_base_only": {"dataset": "SMAP", "embedder": "usad", "mode": "base-only", "epochs": 3},
        "kmeans": {"dataset": "MSL", "detector": "kmeans"},
        "pca": {"dataset": "SMD", "detector": "pca", "stride": 5},
        "released_a": {"dataset": "MSL", "released_steps": ("a", "c"), "per_entity": True},
        "params": {"dataset": "x", "embedder_params": {"hidden_size": 8}, "detector_params": {"rho": 0.1}},
    }
    out: dict[str, Any] = {}
    for name, settings in rows.items():
        config = BenchmarkConfig(**settings)
        out[name] = {
            "fingerprint": config.fingerprint(),
            "command": config.command(),
            "detector": _comparable_params(build_detector(config, 1).get_params()),
        }
    stored = {}
    for path in sorted(glob.glob(str(ROOT / "benchmarks" / "results" / "**" / "*.json"), recursive=True)):
        try:
            record = json.loads(Path(path).read_text())
        except (OSError, ValueError):
            continue
        settings = record.get("settings") if isinstance(record, dict) else None
        if not isinstance(settings, dict) or "dataset" not in settings:
            continue
        settings = {k: tuple(v) if isinstance(v, list) else v for k, v in settings.items()}
        if "n_clusters" in settings and "n_clusters" not in BenchmarkConfig.__dataclass_fields__:
            settings["n_centroids"] = settings.pop("n_clusters")  # the KMeans baseline's k, renamed
        try:
            stored[str(Path(path).relative_to(ROOT))] = BenchmarkConfig(**settings).fingerprint()
        except (TypeError, ValueError) as exc:
            stored[str(Path(path).relative_to(ROOT))] = f"error: {type(exc).__name__}"
    out["stored_results"] = stored
    return out


def collect() -> dict[str, Any]:
    torch.set_num_threads(1)
    return {"environment": environment(), "detectors": detector_results(), "cli": cli_results(),
            "benchmark": benchmark_results()}


def environment() -> dict[str, str]:
    """What the scores depend on besides the code: recorded with the reference."""
    import platform

    import scipy
    import sklearn

    return {"python": platform.python_version(), "machine": platform.machine(), "numpy": np.__version__,
            "scipy": scipy.__version__, "scikit-learn": sklearn.__version__, "torch": torch.__version__}


def environment_changes(reference: dict[str, Any]) -> list[str]:
    """How this environment differs from the one ``reference`` was recorded in."""
    recorded, now = reference.get("environment", {}), environment()
    return [f"{k} {recorded.get(k, '?')} -> {now[k]}" for k in now if recorded.get(k) != now[k]]


def differences(reference: Any, current: Any, where: str = "", rtol: float = STRICT_RTOL) -> list[str]:
    """Every difference between ``reference`` and ``current`` (nested JSON); float arrays within
    ``rtol`` of their largest |value|, floats within ``rtol`` of themselves, the rest exactly."""
    if isinstance(reference, dict) and isinstance(current, dict):
        out = []
        for key in sorted(set(reference) | set(current)):
            if key not in current:
                out.append(f"{where}/{key}: missing now")
            elif key not in reference:
                out.append(f"{where}/{key}: new (not in the reference)")
            else:
                out += differences(reference[key], current[key], f"{where}/{key}", rtol)
        return out
    if isinstance(reference, list) and reference and all(isinstance(v, float) for v in reference):
        ref, cur = np.asarray(reference), np.asarray(current, dtype=np.float64)
        if ref.shape != cur.shape:
            return [f"{where}: shape {ref.shape} -> {cur.shape}"]
        scale = float(np.nanmax(np.abs(ref))) if np.isfinite(ref).any() else 0.0
        if not np.allclose(ref, cur, rtol=0.0, atol=rtol * scale + 1e-11, equal_nan=True):
            return [f"{where}: max abs difference {np.nanmax(np.abs(ref - cur)):.3g} (allowed {rtol * scale:.3g})"]
        return []
    if isinstance(reference, float) and isinstance(current, float):
        return [] if np.isclose(reference, current, rtol=rtol, atol=1e-11) else [f"{where}: {reference!r} -> {current!r}"]
    return [] if reference == current else [f"{where}: {reference!r} -> {current!r}"]


def only_recorded(reference: dict[str, Any], current: dict[str, Any]) -> int:
    """Drop from ``current`` the stored results added after the reference (new result files are
    no change of behaviour); returns how many."""
    stored, recorded = current["benchmark"]["stored_results"], reference["benchmark"]["stored_results"]
    added = [name for name in stored if name not in recorded]
    for name in added:
        del stored[name]
    return len(added)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", action="store_true", help="write a new reference")
    parser.add_argument("--reference", default=str(REFERENCE))
    parser.add_argument("--strict", action="store_true", help=f"scores to {STRICT_RTOL:g} relative (the recorded environment only)")
    args = parser.parse_args(argv)
    current = collect()
    if args.record:
        Path(args.reference).write_text(json.dumps(current, sort_keys=True) + "\n")
        print(f"reference written to {args.reference}")
        return 0
    reference = json.loads(Path(args.reference).read_text())
    current = json.loads(json.dumps(current))
    added = only_recorded(reference, current)
    rtol = STRICT_RTOL if args.strict else PORTABLE_RTOL
    changed = environment_changes(reference)
    if changed:
        print("environment differs from the reference's: " + ", ".join(changed))
    del current["environment"]
    found = differences({k: v for k, v in reference.items() if k != "environment"}, current, rtol=rtol)
    for line in found:
        print(line)
    n_scores = sum(len(v["scores"]) for v in current["detectors"].values())
    print(f"behaviour check: {len(current['detectors'])} detectors ({n_scores} test scores), "
          f"{len(current['cli'])} CLI argument sets, {len(current['benchmark']['stored_results'])} stored "
          f"result fingerprints ({added} result files newer than the reference not compared; scores to "
          f"{rtol:g} of their scale): "
          f"{'IDENTICAL' if not found else f'{len(found)} DIFFERENCES'}")
    return 0 if not found else 1


if __name__ == "__main__":
    sys.exit(main())
