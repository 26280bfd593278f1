"""Evaluation protocols: how scores become predictions (thresholds) and results."""

from madcluster.evaluation.runner import BenchmarkConfig, BenchmarkResult, run_benchmark
from madcluster.evaluation.thresholds import (
    PROTOCOLS,
    ThresholdProtocol,
    ThresholdResult,
    best_f1_threshold,
    combined_threshold,
    compute_thresholds,
    get_protocol,
    test_ratio_threshold,
    train_quantile_threshold,
)

__all__ = [
    "PROTOCOLS",
    "BenchmarkConfig",
    "BenchmarkResult",
    "ThresholdProtocol",
    "ThresholdResult",
    "best_f1_threshold",
    "combined_threshold",
    "compute_thresholds",
    "get_protocol",
    "run_benchmark",
    "test_ratio_threshold",
    "train_quantile_threshold",
]
