"""Evaluation protocols: how scores become predictions (thresholds) and results.

``BenchmarkConfig(released_steps="abcde")`` (or ``madcluster benchmark --released-steps``) applies
the released code's evaluation step by step (:mod:`.released_protocol`; c is an ORACLE, e a LEAK).
"""

from madcluster.lazy import lazy_exports

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
    "train_quantile_threshold",
    "window_labels",
    "window_scores",
]

_MODULES = {
    "aggregate": ["BenchmarkResult"],
    "config": ["BenchmarkConfig"],
    "released_protocol": ["STEPS", "check_steps", "window_labels", "window_scores"],
    "runner": ["GridResult", "run_benchmark", "run_grid"],
    "thresholds": [
        "PROTOCOLS", "ThresholdProtocol", "ThresholdResult", "best_f1_threshold",
        "combined_threshold", "compute_thresholds", "get_protocol", "test_ratio_threshold",
        "train_quantile_threshold",
    ],
}
# imported on first use: the command line's options live in this package and must stay light
__getattr__, __dir__ = lazy_exports(
    __name__, globals(), {n: f"{__name__}.{m}" for m, names in _MODULES.items() for n in names}
)
