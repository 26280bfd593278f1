"""Telling a collapsed MADCluster run from a healthy one, from its training history.

By design the default run pulls every normal window toward the center: the soft assignment q
rises toward 1 and the spread of h and of the score terms shrinks (the demo's settings,
``MADCluster(epochs=10, stride=5, lr=3e-3, rho=0.1, random_state=0)`` on ``make_demo_data().train``:
q from .91 to .998, h spread 3x smaller, distance-term std 36x smaller; ``madcluster demo`` detects
with ROC-AUC about .9). That is not collapse. A collapsed run maps every window to (numerically) the
same point: h's spread falls by orders of magnitude and the distance term's spread reaches
float32 noise, so the score no longer tells windows apart. Only that is flagged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

#: h's spread below this fraction of its first-epoch value: every window maps to the center.
COLLAPSE_SPREAD_RATIO = 1e-3
#: A distance-term standard deviation below this is float32 noise: the score carries nothing.
COLLAPSE_TERM_STD = 1e-6


def collapse_diagnosis(history: Mapping[str, Sequence[float]]) -> tuple[bool, str]:
    """``(collapsed, one-line explanation)`` from the last epoch of a training ``history``."""
    spread = [float(v) for v in history.get("h_spread", []) or []]
    term = [float(v) for v in history.get("distance_term_std", []) or []]
    if not spread:
        return False, "no collapse diagnostics recorded (base model alone, or k > 1)"
    ratio = spread[-1] / spread[0] if spread[0] > 0 else 1.0
    collapsed = ratio < COLLAPSE_SPREAD_RATIO or (bool(term) and term[-1] < COLLAPSE_TERM_STD)
    detail = f"h spread {spread[-1]:.3g} ({ratio:.1%} of epoch 1)"
    if term:
        detail += f", distance-term std {term[-1]:.3g}"
    if collapsed:
        return True, (
            f"COLLAPSED: {detail}: every window maps to the center, so scores no longer "
            "tell windows apart; try a larger rho, fewer epochs or --preset paper"
        )
    return False, (
        f"healthy: {detail}; q near 1 and shrinking spreads are expected (normal data "
        f"is pulled to the center); collapse = h spread < {COLLAPSE_SPREAD_RATIO:.1%} "
        f"of epoch 1 or distance-term std < {COLLAPSE_TERM_STD:g}"
    )
