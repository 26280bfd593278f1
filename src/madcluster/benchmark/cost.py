"""What a fit costs: parameters, multiply-accumulates per window, peak resident memory.

MACs = FLOPs / 2 from ``torch.utils.flop_counter`` for torch models (the matmul-type ops of the
GRU / Linear layers), analytic for the window baselines. Peak memory is the RSS sampled from
``/proc/self/statm`` every 10 ms minus the RSS at the start (``tracemalloc`` does not see torch's
allocations).
"""

from __future__ import annotations

import os
import resource
import sys
import threading
from typing import Any

from madcluster.compute import torch_model_cost


def model_cost(detector: Any, window_size: int) -> dict[str, Any]:
    """Parameters and multiply-accumulates per window: each detector reports its own (``cost``)."""
    return dict(detector.cost(window_size))


def process_max_rss_mb() -> float:
    """This process's resident-memory high-water mark in MiB."""
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB on Linux
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**20


class PeakRSS:
    """Peak resident memory above the level at entry, by sampling ``/proc/self/statm``.

    ``tracemalloc`` misses torch's C++ allocations and ``ru_maxrss`` is a process-wide high-water
    mark (useless for the second task in one process), so a background thread samples the RSS.
    Off Linux it falls back to the ``ru_maxrss`` increase.
    """

    def __init__(self, interval: float = 0.01) -> None:
        self.interval = interval
        self.peak_mb = 0.0
        self._stop = threading.Event()
        self._page = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096

    def _rss(self) -> int | None:
        try:
            with open("/proc/self/statm", "rb") as fh:
                return int(fh.read().split()[1]) * self._page
        except (OSError, ValueError, IndexError):
            return None

    def _sample(self) -> None:
        while not self._stop.wait(self.interval):
            rss = self._rss()
            if rss is not None and rss > self._peak:
                self._peak = rss

    def __enter__(self) -> PeakRSS:  # noqa: PYI034
        self._start = self._rss()
        self._max0 = process_max_rss_mb()
        self._peak = self._start or 0
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        if self._start is not None:
            final = self._rss() or 0
            self.peak_mb = (max(self._peak, final) - self._start) / 2**20
        else:
            self.peak_mb = process_max_rss_mb() - self._max0


__all__ = ["PeakRSS", "model_cost", "process_max_rss_mb", "torch_model_cost"]
