"""The runtime options every command shares: ``--device``, ``--threads`` (with the warning when
threads are slower than one on a busy machine) and whether to show progress."""

from __future__ import annotations

import argparse
import sys

from madcluster.cli.arg_types import threads_option


def add_runtime_options(group, *, device: str | None = None) -> None:
    """``--device`` (default ``device``, else the estimator's) and ``--threads`` (the estimator's
    ``n_jobs``; every command shares its default, :mod:`madcluster.threads`)."""
    shown = device or "the estimator's: auto, CUDA if available"
    group.add_argument(
        "--device", default=device, help=f"cpu, cuda, cuda:N or auto (default: {shown})"
    )
    group.add_argument(
        "--threads",
        type=threads_option,
        default=None,
        help="CPU threads for torch: 1 or more, or -1 for every core (default: 1, right when other "
        "jobs share the cores; more threads help only on a machine of your own)",
    )


def apply_runtime(args: argparse.Namespace) -> None:
    """Check ``--device`` and set ``--threads`` before any data is read or model trained."""
    import torch

    from madcluster.data.validation import check_device
    from madcluster.threads import resolve_threads

    if args.device is not None:
        check_device(args.device)
    threads = resolve_threads(args.threads)
    torch.set_num_threads(threads)
    if threads > 1 and not getattr(args, "_threads_checked", False):
        args._threads_checked = True
        slowdown = thread_slowdown(threads)
        if slowdown > SLOW_THREADS:
            print(
                f"warning: --threads {threads}: a test product ran {slowdown:.1f}x slower on "
                f"{threads} threads than on one; the cores are busy with other work, where threads "
                "wait for each other; --threads 1 may be much faster",
                file=sys.stderr,
            )


#: ``--threads N`` is warned about when a test product runs this many times slower on N threads
#: than on one (on a busy 2-core machine, 2 threads ran a batch 50x slower than one).
SLOW_THREADS = 2.0


def thread_slowdown(threads: int, seconds: float = 0.02) -> float:
    """How many times longer a small matrix product takes on ``threads`` threads than on one
    (below 1: faster), each timed for about ``seconds`` (the best of a few runs). Leaves torch on
    ``threads`` threads."""
    import time

    import torch

    a = torch.randn(160, 160)

    def best(n: int) -> float:
        torch.set_num_threads(n)
        times, deadline = [], time.perf_counter() + seconds
        while time.perf_counter() < deadline or len(times) < 3:
            start = time.perf_counter()
            for _ in range(4):
                torch.mm(a, a)
            times.append(time.perf_counter() - start)
        return min(times)

    try:
        one = best(1)
        return best(threads) / max(one, 1e-9)
    finally:
        torch.set_num_threads(threads)


def show_progress(args: argparse.Namespace) -> bool:
    """Progress unless ``--quiet``: bars on a terminal, plain epoch lines with elapsed time and
    time left when stderr is a file (:mod:`madcluster.training.progress`)."""
    return not args.quiet
