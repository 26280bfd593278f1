"""Writing to the terminal: messages, notes, epoch lines, metrics; a closed stdout is not an
error."""

from __future__ import annotations

import argparse
import os
import re
import sys
import warnings
from typing import NoReturn, TextIO

import numpy as np

from madcluster.exceptions import FarFromTrainingWarning


def say(*parts: object) -> None:
    """Print a result line on stdout; if the reader has gone (``| head``) keep working silently."""
    try:
        print(*parts, flush=True)
    except BrokenPipeError:
        stdout_gone()


def stdout_gone() -> None:
    """Point stdout at /dev/null so later prints and the exit flush do not raise again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout replaced by something without a file descriptor
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives until exit
    finally:
        os.close(devnull)


def print_note(args: argparse.Namespace, message: str) -> None:
    """Tell the user something on stderr, unless ``--quiet``."""
    if not getattr(args, "quiet", False):
        print(f"note: {message}", file=sys.stderr)


def show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """``warnings.showwarning`` for the command line: madcluster's own warnings as one
    ``WARNING: ...`` line, like its log's (the library's file and line mean nothing to a user);
    any other as Python shows it."""
    out = sys.stderr if file is None else file
    try:
        if issubclass(category, FarFromTrainingWarning):
            print(f"WARNING: {message}", file=out)
        else:
            out.write(warnings.formatwarning(message, category, filename, lineno, line))
    except (BrokenPipeError, OSError):  # stderr gone: nothing to tell
        pass


def epoch_lines(history: dict) -> list[str]:
    """``epoch 3: loss 0.1234  val 0.1300  nu 0.0100  R 0.5000  (0.42 s)``, one per epoch."""
    shown = [("train_loss", "loss"), ("val_loss", "val"), ("nu", "nu"), ("radius", "R")]
    lines = []
    for i, epoch in enumerate(history.get("epoch", [])):
        values = "  ".join(
            f"{label} {history[key][i]:.4f}" for key, label in shown if key in history
        )
        seconds = f"  ({history['seconds'][i]:.2f} s)" if "seconds" in history else ""
        lines.append(f"epoch {int(epoch)}: {values}{seconds}")
    return lines


def print_metrics(scores: np.ndarray, labels: np.ndarray, threshold: float) -> dict[str, float]:
    from madcluster.metrics import evaluate

    if labels.min() == labels.max():
        say("labels are all one class: metrics skipped")
        return {}
    metrics = evaluate(scores, labels, threshold=threshold)
    say("metrics (no point adjustment; range/VUS metrics on continuous scores, window 100):")
    for key, value in metrics.items():
        say(f"  {key:<15} {value:.4f}")
    return metrics


#: What reads as a negative number on a command line: -1, -1.5, -.5, -1e308, -1.5E-3, -inf, -nan.
NEGATIVE_NUMBER = re.compile(
    r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^-(inf|infinity|nan)$", re.IGNORECASE
)


class OneLineErrorParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line plus where to look, not the usage block.

    A mistyped flag of ``madcluster fit`` used to print twenty lines of usage before the message;
    the message and ``see `madcluster fit --help``` are what the user needs. Exit status stays 2.
    Negative numbers in any notation (``--threshold -1e308``, ``-.5``, ``-inf``) are values, not
    options (argparse's own rule knows ``-1`` and ``-1.5`` only).
    """

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._negative_number_matcher = NEGATIVE_NUMBER

    def error(self, message: str) -> NoReturn:
        try:
            print(f"{self.prog}: error: {message}", file=sys.stderr)
            print(f"see `{self.prog} --help`", file=sys.stderr)
        except BrokenPipeError:
            pass
        raise SystemExit(2)
