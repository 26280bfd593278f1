"""Evaluation protocols: how scores become predictions (thresholds) and results."""

from madcluster.evaluation.aggregate import BenchmarkResult
from madcluster.evaluation.config import BenchmarkConfig
from madcluster.evaluation.runner import GridResult, run_benchmark, run_grid
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
    "GridResult",
    "ThresholdProtocol",
    "ThresholdResult",
    "best_f1_threshold",
    "combined_threshold",
    "compute_thresholds",
    "get_protocol",
    "run_benchmark",
    "run_grid",
    "test_ratio_threshold",
    "train_quantile_threshold",
]
