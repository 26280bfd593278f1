"""The one thread default shared by the estimator, the CLI (``--threads``), fleets and benchmarks.

``n_jobs`` follows scikit-learn: ``None`` means one thread, ``-1`` every core this process may
use, ``-2`` all but one, and a positive number exactly that many. One thread is the default
because a PyTorch model on a shared machine pays dearly for more: GRU training slowed by about
30x when two torch threads competed with another busy process (benchmarks/README.md,
"Threads"), and a default should not risk that. Whoever owns the cores asks for them with
``n_jobs=-1`` / ``--threads -1``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from madcluster.exceptions import ParameterError

DEFAULT_N_JOBS: int | None = None  # = one thread, as scikit-learn's n_jobs=None


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity where the OS tells, else the count)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def check_n_jobs(n_jobs: object) -> None:
    """A clear error for anything but None or a non-zero integer."""
    if n_jobs is None:
        return
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0:
        raise ParameterError(
            "n_jobs (threads) must be None (one thread), a positive integer, or -1 for every core, "
            f"got {n_jobs!r}"
        )


def resolve_threads(n_jobs: int | None = DEFAULT_N_JOBS) -> int:
    """How many torch threads ``n_jobs`` means here (scikit-learn's rule: -1 = all, -2 = all but
    one)."""
    check_n_jobs(n_jobs)
    if n_jobs is None:
        return 1
    if n_jobs > 0:
        return n_jobs
    return max(1, available_cores() + 1 + n_jobs)


@contextlib.contextmanager
def torch_threads(n_jobs: int | None = DEFAULT_N_JOBS) -> Iterator[int]:
    """Run the block with ``resolve_threads(n_jobs)`` torch threads; restore the previous count."""
    import torch

    threads = resolve_threads(n_jobs)
    previous = torch.get_num_threads()
    if threads != previous:
        torch.set_num_threads(threads)
    try:
        yield threads
    finally:
        if torch.get_num_threads() != previous:
            torch.set_num_threads(previous)
