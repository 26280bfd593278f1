"""argparse types shared by the commands: each refuses a bad value at parse time, with one line
naming it, before anything is read or trained."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from madcluster.estimator.params import MADCLUSTER_PARAMS
from madcluster.exceptions import ParameterError


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (threads, epochs, sizes), with a message naming the value."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer (1 or more), got {value}")
    return value


def finite_float(text: str) -> float:
    """argparse type: a finite number (so ``--threshold nan`` fails before anything is written)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not np.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value


def threads_option(text: str) -> int:
    """argparse type: torch threads as the estimator's ``n_jobs``: k >= 1, or -1 for every core.
    More threads than this machine's cores only thrash it: warned about and capped to the cores."""
    from madcluster.threads import available_cores

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a whole number of threads, got {text!r}"
        ) from None
    if value == 0 or value < -1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, or -1 for every core, got {value}")
    cores = available_cores()
    if value > cores:
        print(
            f"warning: --threads {value} is more than the {cores} core(s) this process may use; "
            f"using {cores}",
            file=sys.stderr,
        )
        return cores
    return value


def int_in_range(low: int, high: int | None = None, what: str = "") -> Any:
    """argparse type: an integer in ``[low, high]`` (no upper bound when ``high`` is None),
    refused at parse time with one line naming the range."""
    span = f"{low} or more" if high is None else f"from {low} to {high}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected a whole number{what}, got {text!r}"
            ) from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be {span}{what}, got {value}")
        return value

    return parse


BYTE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def byte_size(text: str) -> int:
    """argparse type: a size in bytes, ``0`` or more, with an optional binary unit (``512M``,
    ``2G``; ``K``, ``M``, ``G``, ``T``, a ``B`` or ``iB`` after it allowed)."""
    cleaned = text.strip().upper().removesuffix("IB").removesuffix("B")
    unit = cleaned[-1:] if cleaned[-1:] in BYTE_UNITS else ""
    number = cleaned[: len(cleaned) - len(unit)].strip()
    try:
        value = float(number)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a size such as 1073741824, 512M or 2G, got {text!r}"
        ) from None
    if not np.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a size of 0 or more, got {text!r}")
    return int(value * BYTE_UNITS[unit])


def float_in_range(
    low: float, high: float | None = None, *, low_open: bool = False, what: str = ""
) -> Any:
    """argparse type: a finite number in ``[low, high]`` (``(low, high]`` with ``low_open``)."""
    left = "(" if low_open else "["
    span = (
        f"in {left}{low:g}, {high:g}]"
        if high is not None
        else (f"above {low:g}" if low_open else f"{low:g} or more")
    )

    def parse(text: str) -> float:
        value = finite_float(text)
        if value < low or (low_open and value == low) or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be {span}{what}, got {text!r}")
        return value

    return parse


SEED_MAX = 2**32 - 1  # numpy's and scikit-learn's seeds: 0 .. 2**32 - 1


EVERY_WINDOW = "all"


def epoch_windows(text: str) -> int | str:
    """argparse type: windows per epoch, a positive integer or ``all`` (every window)."""
    if text.strip().lower() == EVERY_WINDOW:
        return EVERY_WINDOW
    return positive_int(text)


def checked_param(param: str) -> Callable[[str], float]:
    """argparse type: a finite number that the estimator's table allows for ``param`` (checked
    while parsing, before anything is read or trained)."""

    def parse(text: str) -> float:
        value = finite_float(text)
        try:
            MADCLUSTER_PARAMS[param].check(param, value)
        except ParameterError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        return value

    parse.__name__ = param  # argparse names the type in its messages
    return parse


# a number in [0, 1): the benchmark's --validation-size
fraction_option = checked_param("validation_size")
