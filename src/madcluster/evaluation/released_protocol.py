"""The released code's evaluation, one named step at a time, so each step's inflation can be
measured.

The paper's authors report numbers from a protocol that differs from the paper's text
(docs/evaluation.md). Each difference is a step
that a benchmark row can switch on (``BenchmarkConfig(released_steps=...)``, ``madcluster
benchmark --released-steps a b ...``); the decomposition benchmark adds them cumulatively:

* ``a`` one model per entity (channel / machine), each with MinMax scaling fitted on its train part;
* ``b`` window-level evaluation at stride 1: every window of L steps gets one score (the mean of the
  detector's per-step scores inside that window) and the label "anomalous if any point in it is",
  which moves each anomaly's start L - 1 steps earlier (window ``s`` covers ``s .. s + L - 1``);
* ``c`` the best-F1 threshold on the test labels becomes the headline protocol: an ORACLE;
* ``d`` range-AUC / VUS computed on the 0/1 predictions at each protocol's threshold instead of on
  the continuous scores;
* ``e`` the test set as the validation set: early stopping, the best checkpoint and R (pooled over
  train + test windows) all see TEST data. A LEAK of test data into training, run only to measure
  how much it inflates the numbers.

Everything here is a pure helper; :mod:`.fit_score` applies the steps to one task.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

STEP_ORDER = ("a", "b", "c", "d", "e")
HONEST_PROTOCOL = "test-ratio"  # the paper's text: the headline of a row without step c
ORACLE_PROTOCOL = "best-f1"


@dataclass(frozen=True)
class ReleasedStep:
    """One difference between the paper's text and the released code's evaluation."""

    key: str
    name: str
    description: str
    oracle: bool = False
    leak: bool = False

    @property
    def label(self) -> str:
        """``c (ORACLE)``, ``e (LEAK)``, or the bare key: how every table names the step."""
        if self.leak:
            return f"{self.key} (LEAK)"
        return f"{self.key} (ORACLE)" if self.oracle else self.key


STEPS: dict[str, ReleasedStep] = {
    s.key: s
    for s in (
        ReleasedStep(
            "a",
            "per-entity-minmax",
            "one model per entity (channel / machine), MinMax scaling fitted on its train part",
        ),
        ReleasedStep(
            "b",
            "window-labels",
            "window-level scores at stride 1 (mean of the per-step scores in each window); a "
            "window is anomalous if any point in it is, which starts each anomaly L - 1 steps "
            "earlier",
        ),
        ReleasedStep(
            "c",
            "oracle-threshold",
            "ORACLE: the headline threshold is the best-F1 one on the test labels",
            oracle=True,
        ),
        ReleasedStep(
            "d",
            "range-on-predictions",
            "Range-AUC / VUS computed on the 0/1 predictions at the threshold, not on the scores",
        ),
        ReleasedStep(
            "e",
            "test-as-validation",
            "LEAK: the test set is the validation set (early stopping, best checkpoint, R pooled "
            "over train + test); only run to measure the inflation",
            leak=True,
        ),
    )
}


# ------------------------------------------------------------------------------------ step sets
def check_steps(steps: Any) -> tuple[str, ...]:
    """Steps as a sorted tuple of distinct keys from ``a``..``e``.

    Accepts ``None`` / ``()`` / ``"none"`` (no step), a string (``"abc"``, ``"a,b"``) or a sequence
    of keys; anything else fails with the list of known steps.
    """
    if steps is None:
        return ()
    if isinstance(steps, str):
        text = steps.strip().lower()
        if text in ("", "none", "honest"):
            return ()
        items: Iterable[Any] = [c for c in text.replace(",", " ").replace("+", " ") if c != " "]
    elif isinstance(steps, Iterable):
        items = steps
    else:
        raise ValueError(  # noqa: TRY004
            f"released_steps must be a list of step keys, got {steps!r}"
        )
    keys = []
    for item in items:
        key = str(item).strip().lower()
        if key in ("none", "honest"):
            continue
        if key not in STEPS:
            raise ValueError(
                f"unknown released-protocol step {item!r}; choose from {', '.join(STEP_ORDER)} "
                "(" + "; ".join(f"{k}: {s.name}" for k, s in STEPS.items()) + ")"
            )
        keys.append(key)
    if len(set(keys)) != len(keys):
        raise ValueError(f"released-protocol steps must be distinct, got {list(keys)}")
    return tuple(sorted(keys, key=STEP_ORDER.index))


def cumulative_steps(last: str) -> tuple[str, ...]:
    """Steps ``a`` up to and including ``last``: one column of the decomposition table."""
    last = check_steps(last)
    if len(last) != 1:
        raise ValueError(f"name one step, got {last!r}")
    return STEP_ORDER[: STEP_ORDER.index(last[0]) + 1]


def is_oracle(steps: Sequence[str]) -> bool:
    return any(STEPS[s].oracle for s in steps)


def is_leak(steps: Sequence[str]) -> bool:
    return any(STEPS[s].leak for s in steps)


def headline_protocol(steps: Sequence[str]) -> str:
    """The protocol a row's headline numbers come from: best-f1 (ORACLE) with step c, else
    test-ratio."""
    return ORACLE_PROTOCOL if "c" in steps else HONEST_PROTOCOL


def steps_suffix(steps: Sequence[str]) -> str:
    """File-name part, e.g. ``released-abcd-oracle`` or ``released-abcde-oracle-leak`` (no steps:
    '')."""
    if not steps:
        return ""
    return (
        "released-"
        + "".join(steps)
        + ("-oracle" if is_oracle(steps) else "")
        + ("-leak" if is_leak(steps) else "")
    )


def steps_label(steps: Sequence[str]) -> str:
    """Table label, e.g. ``released steps a+b+c (ORACLE)+d+e (LEAK)``; ``honest`` without steps."""
    if not steps:
        return "honest"
    return "released steps " + "+".join(STEPS[s].label for s in steps)


def describe_steps(steps: Sequence[str]) -> dict[str, Any]:
    """What a result JSON records: the steps, their names and descriptions, the flags, the
    headline."""
    return {
        "steps": list(steps),
        "names": [STEPS[s].name for s in steps],
        "descriptions": {s: STEPS[s].description for s in steps},
        "oracle": is_oracle(steps),
        "leak": is_leak(steps),
        "headline_protocol": headline_protocol(steps),
        "range_metrics_on": "predictions" if "d" in steps else "scores",
        "label": steps_label(steps),
    }


# --------------------------------------------------------------------------------- step b: windows
def window_labels(labels: Any, window: int) -> np.ndarray:
    """Label of each stride-1 window (start ``s`` covers ``s .. s + window - 1``): 1 if any point
    is.

    Indexed by the window's start, an anomaly on ``[i, j]`` becomes windows ``[i - window + 1, j]``
    (clipped to the series): L - 1 steps earlier, never later. Length ``T - window + 1``.
    """
    y = np.asarray(labels)
    if y.ndim != 1:
        raise ValueError(f"labels must be 1-D, got shape {y.shape}")
    _check_window(window, len(y))
    positive = np.concatenate([[0], np.cumsum(y.astype(bool), dtype=np.int64)])
    return (positive[window:] - positive[:-window] > 0).astype(np.uint8)


def window_mean(point_values: Any, window: int) -> np.ndarray:
    """Mean of ``point_values`` over each stride-1 window (length ``T - window + 1``)."""
    x = np.asarray(point_values, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"point values must be 1-D, got shape {x.shape}")
    _check_window(window, len(x))
    total = np.concatenate([[0.0], np.cumsum(x)])
    return (total[window:] - total[:-window]) / window


def window_scores(detector: Any, X: Any, window: int) -> tuple[np.ndarray, str]:
    """One score per stride-1 window of ``X`` and how it was computed.

    A fitted MADCluster scores every window with its network (each window's per-step score terms,
    combined as the detector combines them, averaged over the window's L steps: the combination is
    affine, so this is the mean per-step score computed inside that window). Any other detector's
    point scores are averaged over each window instead.
    """
    model = getattr(detector, "model_", None)  # a fitted MADCluster's network (baselines have none)
    if model is not None and window == model.grid.window_size:
        return _network_window_scores(model, X), (
            "network: mean of the per-step scores computed inside each stride-1 window"
        )
    return window_mean(detector.decision_function(X), window), (
        "mean of the detector's point scores over each stride-1 window"
    )


def _network_window_scores(model: Any, X: Any) -> np.ndarray:
    """Per-step scores inside each stride-1 window of ``X``, averaged per window and combined as
    the score combines them (``model``: a :class:`~madcluster.estimator.fitted.FittedModel`)."""
    import torch

    from madcluster.data.windows import gather_windows

    data = model.inputs.validate_rows(X)
    net = model.net.eval()
    device = next(net.parameters()).device
    series = torch.from_numpy(model.inputs.model_input(data)).to(device)
    starts = np.arange(len(series) - model.grid.window_size + 1)
    parts: dict[str, list[np.ndarray]] = {}
    with torch.no_grad():
        batch, window = model.grid.scoring_batch, model.grid.window_size
        for i in range(0, len(starts), batch):
            x = gather_windows(series, starts[i : i + batch], window)
            for name, values in net.score(x).items():
                parts.setdefault(name, []).append(values.double().mean(dim=1).cpu().numpy())
    return model.head.combine({name: np.concatenate(chunks) for name, chunks in parts.items()})


def window_label_ratio(labels: Any, test_slices: Iterable[tuple[int, int]], window: int) -> float:
    """Fraction of anomalous stride-1 windows over every part (entity) long enough for one window.

    The "known test anomaly ratio" that ``test-ratio`` / ``combined`` use once step b has turned
    the labels into window labels (as the paper uses the point labels' ratio).
    """
    y = np.asarray(labels)
    positive = total = 0
    for start, stop in test_slices:
        part = y[start:stop]
        if len(part) >= window:
            w = window_labels(part, window)
            positive += int(w.sum())
            total += len(w)
    return positive / total if total else 0.0


def _check_window(window: int, n: int) -> None:
    if not isinstance(window, (int, np.integer)) or isinstance(window, bool) or window < 1:
        raise ValueError(f"window must be a positive integer, got {window!r}")
    if n < window:
        raise ValueError(f"a series of {n} steps is shorter than one window ({window})")


# ------------------------------------------------------------------------------ steps a and e: fit
def detector_overrides(steps: Sequence[str], detector_params: Iterable[str]) -> dict[str, Any]:
    """Constructor arguments that step ``a`` sets: MinMax scaling, where the detector has it."""
    return {"scaling": "minmax"} if "a" in steps and "scaling" in set(detector_params) else {}


def fit_arguments(steps: Sequence[str], detector: Any, test: np.ndarray) -> dict[str, Any]:
    """Keyword arguments of ``detector.fit``: with step ``e`` (LEAK) the test set as validation
    data and R pooled over train + test; without it nothing, so the default never sees test data."""
    if "e" not in steps or not _accepts_validation(detector):
        return {}
    return {"validation_data": test, "pool_radius": True}


def not_applied(steps: Sequence[str], detector: Any) -> dict[str, str]:
    """Steps the detector cannot take (e.g. a baseline has no validation set), with the reason."""
    out = {}
    name = type(detector).__name__
    if "a" in steps and "scaling" not in detector.get_params():
        out["a"] = f"{name} has no scaling option: one model per entity, but its own scaling"
    if "e" in steps and not _accepts_validation(detector):
        out["e"] = f"{name} has no validation data or radius: nothing to leak"
    return out


def _accepts_validation(detector: Any) -> bool:
    import inspect

    try:
        params = inspect.signature(detector.fit).parameters
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        return False
    return "validation_data" in params and "pool_radius" in params


__all__ = [
    "HONEST_PROTOCOL",
    "ORACLE_PROTOCOL",
    "STEPS",
    "STEP_ORDER",
    "ReleasedStep",
    "check_steps",
    "cumulative_steps",
    "describe_steps",
    "detector_overrides",
    "fit_arguments",
    "headline_protocol",
    "is_leak",
    "is_oracle",
    "not_applied",
    "steps_label",
    "steps_suffix",
    "window_label_ratio",
    "window_labels",
    "window_mean",
    "window_scores",
]
