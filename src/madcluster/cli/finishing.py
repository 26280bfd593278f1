"""Ctrl-C and SIGTERM during ``madcluster fit``: the training is kept, and after the last epoch the
model is finished and written, not lost.

SIGTERM is what ``timeout``, systemd, ``docker stop`` and Kubernetes send; it is treated as Ctrl-C
(:class:`FitSignals`): during training the loop saves its state to ``OUTPUT.partial`` and
``--resume`` goes on from it; while the model is finished after the last epoch
(:meth:`FitSignals.finishing`, the context :meth:`MADCluster.fit
<madcluster.estimator.detector.MADCluster.fit>` finishes the model in) the first one is noted, not
obeyed.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: the names the messages give the two signals
SIGNAL_NAMES = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM"}


class FitSignals:
    """Ctrl-C and SIGTERM during one fit: :meth:`fitting` around it, :meth:`finishing` passed to
    it.

    ``received``: the last of the two that came (None: neither); ``deferred``: the one noted while
    the model was finished (None: none came then); :attr:`status`: the exit status a stop by it
    gets (128 + the signal's number, as a shell reports it)."""

    def __init__(self) -> None:
        self.received: signal.Signals | None = None
        self.deferred: signal.Signals | None = None

    @contextmanager
    def fitting(self) -> Iterator[FitSignals]:
        """For the length of the block (the fit), SIGTERM stops like Ctrl-C: a
        ``KeyboardInterrupt``, which the training loop answers by saving its state."""
        if not _main_thread():
            yield self
            return
        previous = signal.signal(signal.SIGTERM, self._stop)
        try:
            yield self
        finally:
            signal.signal(signal.SIGTERM, _handler(previous))

    @property
    def status(self) -> int:
        """128 + the number of the signal that stopped the fit (130 for Ctrl-C)."""
        return 128 + int(self.received or signal.SIGINT)

    @property
    def name(self) -> str:
        """``Ctrl-C`` or ``SIGTERM``: what stopped the fit (or came while it was finished)."""
        return SIGNAL_NAMES[self.deferred or self.received or signal.SIGINT]

    def _stop(self, signum: int, frame: Any) -> None:
        self.received = signal.Signals(signum)
        raise KeyboardInterrupt

    @contextmanager
    def finishing(self) -> Iterator[None]:
        """While the model is finished after its last epoch (input terms, warm-up table, training
        scores: seconds), a first Ctrl-C or SIGTERM is noted, not obeyed: training is done and the
        model seconds away. A second one stops at once; the training loop wrote its last state to
        the ``.partial`` file when it ended, so ``--resume`` finishes the model without training
        again (a double tap is a reflex: it must not lose the epochs)."""
        if not _main_thread():
            yield
            return

        def note(signum: int, frame: Any) -> None:
            if self.deferred is not None:  # the second one
                self.received = signal.Signals(signum)
                raise KeyboardInterrupt
            self.deferred = signal.Signals(signum)
            again = "Ctrl-C again" if signum == signal.SIGINT else "another SIGTERM or a Ctrl-C"
            print(
                f"training is done; finishing the model (a few seconds); {again} stops, "
                "keeping the training for --resume",
                file=sys.stderr,
            )

        previous = {s: signal.signal(s, note) for s in SIGNAL_NAMES}
        try:
            yield
        finally:
            for number, handler in previous.items():
                signal.signal(number, _handler(handler))


def _handler(previous: Any) -> Any:
    """A handler as ``signal.signal`` returned it, to set back (None: one not set from Python)."""
    return signal.SIG_DFL if previous is None else previous


def _main_thread() -> bool:
    """Signal handlers can be set from the main thread only (a fit in a thread keeps Python's)."""
    return threading.current_thread() is threading.main_thread()


__all__ = ["SIGNAL_NAMES", "FitSignals"]
