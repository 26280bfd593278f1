"""Evaluation protocols: how scores become predictions (thresholds) and results.

``BenchmarkConfig(released_steps="abcde")`` (or ``madcluster benchmark --released-steps``) applies
the released code's evaluation step by step (:mod:`.released_protocol`; c is an ORACLE, e a LEAK).
"""

from madcluster.evaluation.aggregate import BenchmarkResult
from madcluster.evaluation.config import BenchmarkConfig
from madcluster.evaluation.released_protocol import (
    STEPS,
    check_steps,
    window_labels,
    window_scores,
)
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
    train_pot_threshold,
    train_quantile_threshold,
)

__all__ = [
    "PROTOCOLS",
    "STEPS",
    "BenchmarkConfig",
    "BenchmarkResult",
    "GridResult",
    "ThresholdProtocol",
    "ThresholdResult",
    "best_f1_threshold",
    "check_steps",
    "combined_threshold",
    "compute_thresholds",
    "get_protocol",
    "run_benchmark",
    "run_grid",
    "test_ratio_threshold",
    "train_pot_threshold",
    "train_quantile_threshold",
    "window_labels",
    "window_scores",
]
