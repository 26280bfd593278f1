"""Ctrl-C after the last epoch of ``madcluster fit``: the model is finished and written, not
lost."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable
from typing import Any


class DeferredInterrupt:
    """While the model is finished after its last epoch (input terms, warm-up table, training
    scores, attribution baseline: seconds), a first Ctrl-C is noted, not obeyed: training is done,
    and the model is seconds away. A second Ctrl-C stops at once; the training loop wrote its last
    state to the ``.partial`` file when it ended, so ``--resume`` finishes the model without
    training again (a double tap is a reflex: it must not lose the epochs)."""

    def __init__(self) -> None:
        self.interrupted = False

    def __call__(self, finish: Callable[..., Any]) -> Callable[..., Any]:
        def finishing(*args: Any, **kwargs: Any) -> Any:
            if threading.current_thread() is not threading.main_thread():
                return finish(*args, **kwargs)
            previous = signal.getsignal(signal.SIGINT)

            def note(signum: int, frame: Any) -> None:
                if self.interrupted:  # the second Ctrl-C
                    raise KeyboardInterrupt
                self.interrupted = True
                print(
                    "training is done; finishing the model (a few seconds); Ctrl-C again stops, "
                    "keeping the training for --resume",
                    file=sys.stderr,
                )

            signal.signal(signal.SIGINT, note)
            try:
                return finish(*args, **kwargs)
            finally:
                signal.signal(signal.SIGINT, previous)

        return finishing


def finish_despite_ctrl_c(detector: Any) -> DeferredInterrupt:
    """Wrap the detector's after-training step (``_fit_training_scores``, where the last epoch
    ends) in a :class:`DeferredInterrupt`; the returned object says whether Ctrl-C came."""
    deferred = DeferredInterrupt()
    finish = getattr(detector, "_fit_training_scores", None)
    if finish is not None:
        detector._fit_training_scores = deferred(finish)
    return deferred


__all__ = ["DeferredInterrupt", "finish_despite_ctrl_c"]
