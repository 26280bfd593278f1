"""What a score means: threshold protocols (how scores become predictions), every metric under
each protocol, and the released code's evaluation steps (:mod:`.released_protocol`; c is an
ORACLE, e a LEAK) that the benchmark can apply one by one. The benchmark itself (grids, tasks,
result files) is :mod:`madcluster.benchmark`.
"""

from madcluster.evaluation.protocols import (
    CONTINUOUS_METRICS,
    METRICS,
    THRESHOLD_METRICS,
    evaluate_protocols,
)
from madcluster.evaluation.released_protocol import (
    STEPS,
    check_steps,
    window_labels,
    window_scores,
)
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
    "CONTINUOUS_METRICS",
    "METRICS",
    "PROTOCOLS",
    "STEPS",
    "THRESHOLD_METRICS",
    "ThresholdProtocol",
    "ThresholdResult",
    "best_f1_threshold",
    "check_steps",
    "combined_threshold",
    "compute_thresholds",
    "evaluate_protocols",
    "get_protocol",
    "test_ratio_threshold",
    "train_pot_threshold",
    "train_quantile_threshold",
    "window_labels",
    "window_scores",
]
