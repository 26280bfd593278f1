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


def model_cost(detector: Any, window_size: int) -> dict[str, Any]:
    """Parameters and multiply-accumulates per window of ``window_size`` steps.

    A detector that reports its own cost (a ``cost(window_size)`` method) is asked; otherwise
    the fitted attributes of MADCluster, PCA and KMeans are read.
    """
    own = getattr(detector, "cost", None)
    if callable(own):
        return dict(own(window_size))
    if hasattr(detector, "net_"):
        return torch_model_cost(detector.net_, window_size, detector.n_features_in_)
    dim = window_size * detector.n_features_in_
    if hasattr(detector, "components_"):  # PCA: one (L*D) x (k + 1) product per window
        k = int(detector.n_components_)
        return {
            "n_params": int(k * dim + dim),
            "macs_per_window": int(dim * (k + 1)),
            "macs_method": "analytic: window vector (L*D) times the k components and the mean",
        }
    k = int(detector.cluster_centers_.shape[0])  # KMeans: one (L*D) x k product per window
    return {
        "n_params": int(k * dim),
        "macs_per_window": int(dim * k),
        "macs_method": "analytic: window vector (L*D) times the k centroids",
    }


def torch_model_cost(net: Any, window_size: int, n_features: int) -> dict[str, Any]:
    """Parameter count and MACs of one window through the embedder and the MADCluster score.

    MACs = FLOPs / 2 from ``torch.utils.flop_counter.FlopCounterMode``, which counts the
    matrix-multiply ops (the GRU's input and hidden projections, Linear layers); element-wise
    work (gates, cosine, distances) is not counted.
    """
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    device = next(net.parameters()).device
    x = torch.zeros(1, window_size, n_features, device=device)
    was_training = net.training
    net.eval()
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        net.score(x)
    net.train(was_training)
    n_embedder = sum(p.numel() for p in net.embedder.parameters())
    n_total = sum(p.numel() for p in net.parameters())
    return {
        "n_params": int(n_total),
        "n_params_embedder": int(n_embedder),
        "n_params_head": int(n_total - n_embedder),
        "macs_per_window": int(counter.get_total_flops() // 2),
        "macs_method": (
            "torch.utils.flop_counter.FlopCounterMode FLOPs / 2 (matmul ops of GRU / Linear "
            "layers), one window [1, L, D]"
        ),
    }


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
