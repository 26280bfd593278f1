"""Defaults that more than one layer needs before torch is imported (the command line's help, the
benchmark's configuration), written here once, and :class:`Param`, the one way a detector's
parameter is declared (default and allowed values) and checked.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

from madcluster.exceptions import ParameterError

DEFAULT_WINDOW_SIZE = 100  # window length L (the paper's)
# At most 20 epochs (validation early stopping usually ends sooner); the measurements behind the
# choice are in docs/method.md.
DEFAULT_EPOCHS = 20
# Training windows per epoch (drawn anew each epoch): an epoch's cost no longer grows with the
# series. Measured in benchmarks/results/fit_budget.md (synthetic suite and the 20,000 x 6 fit).
DEFAULT_EPOCH_WINDOWS = 1920
# Windows per training batch where the embedder does not say otherwise (BaseEmbedder.training_batch)
DEFAULT_BATCH_SIZE = 128
# batch_size / epoch_windows: the embedder class's training_batch (the D-RNN: 32 and 480)
AUTO = "auto"
# Epochs of a warm-started refit (MADCluster.refit): the network starts trained, and the new
# scaling, input terms and threshold do most of the work. One epoch stopped the alarms of a level
# shift as well as three did, at a third of the cost (5,000 rows in 4.7 s on one loaded thread);
# benchmarks/results/fit_budget.md, "A new normal".
REFIT_EPOCHS = 1


@dataclass(frozen=True)
class Param:
    """One constructor parameter: its default and the values it allows, each written once.

    ``allowed`` is a tuple of choices or a predicate described by ``must_be``; ``validate`` is the
    check of a module that owns the rule (it raises its own :class:`ParameterError`). With neither,
    the value is checked where it is used (an embedder's name by the registry, the objective's
    options by ``MethodConfig``). Estimators, the command line and the benchmark's configuration
    read their defaults and checks from tables of these (scikit-learn's ``_parameter_constraints``
    idea, in a few lines of our own).
    """

    default: Any
    allowed: tuple[Any, ...] | Callable[[Any], bool] | None = None
    must_be: str = ""
    validate: Callable[[Any], object] | None = None

    def check(self, name: str, value: Any) -> None:
        """Raise :class:`ParameterError` naming ``name`` and what it allows, for a bad ``value``."""
        if self.validate is not None:
            self.validate(value)
        if isinstance(self.allowed, tuple):
            if value not in self.allowed:
                raise ParameterError(
                    f"unknown {name} {value!r}; choose one of {', '.join(map(str, self.allowed))}"
                )
        elif self.allowed is not None and not self.allowed(value):
            raise ParameterError(f"{name} must be {self.must_be}, got {value!r}")


def check_params(values: Mapping[str, Any], table: Mapping[str, Param]) -> None:
    """Check every parameter of ``table`` present in ``values`` (the first bad one raises)."""
    for name, param in table.items():
        if name in values:
            param.check(name, values[name])


def defaults(table: Mapping[str, Param]) -> dict[str, Any]:
    """Each parameter's default, by name."""
    return {name: param.default for name, param in table.items()}


def is_int(value: Any) -> bool:
    """An integer (numpy's too), not a bool."""
    return isinstance(value, Integral) and not isinstance(value, bool)


def is_positive_int(value: Any) -> bool:
    return is_int(value) and value >= 1


def is_number(value: Any) -> bool:
    """A finite real number (numpy's too), not a bool."""
    return isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value)


def positive_int(default: Any, *, or_none: str = "") -> Param:
    """An integer >= 1 (or None, meaning ``or_none``, where that is given)."""
    if or_none:
        return Param(
            default,
            lambda v: v is None or is_positive_int(v),
            f"a positive integer or None ({or_none})",
        )
    return Param(default, is_positive_int, "a positive integer")


def positive_int_or_auto(default: Any, *, or_none: str = "") -> Param:
    """An integer >= 1 or ``"auto"`` (the embedder's choice), and None (``or_none``) where given."""
    none = f", or None ({or_none})" if or_none else ""
    return Param(
        default,
        lambda v: v == AUTO or (v is None and bool(or_none)) or is_positive_int(v),
        f"a positive integer, 'auto' (the embedder's){none}",
    )


def fraction(default: float, *, below: float = 1.0) -> Param:
    """A number in ``[0, below)``."""
    return Param(default, lambda v: is_number(v) and 0.0 <= v < below, f"in [0, {below:g})")


# how fit turns training scores into threshold_: the train-quantile or the train-pot protocol
THRESHOLD_METHODS = ("quantile", "pot")

#: The parameters every detector shares (MADCluster, the image detector, PCA and KMeans).
SHARED_PARAMS: dict[str, Param] = {
    # expected fraction of anomalies in training data; threshold_ = their (1 - c) quantile
    "contamination": fraction(0.01, below=0.5),
    "threshold": Param("quantile", THRESHOLD_METHODS),
    "random_state": Param(None),
}


def check_threshold_params(params: Mapping[str, Any]) -> None:
    """The rule between ``threshold`` and ``contamination`` every detector shares."""
    if params.get("threshold", "quantile") == "pot" and params["contamination"] <= 0.0:
        raise ParameterError("threshold='pot' needs contamination > 0: it is POT's risk level q")
