"""What a fit tells its user while it runs: a time estimate, then one line or bar per epoch.

On a terminal: tqdm bars (epochs, and batches within the epoch). Anywhere else (a log file, a
pipe, a notebook's captured stderr): plain lines, one per epoch, with the elapsed time and an
estimate of the time left, never tqdm's carriage-return redraws. In both cases one line gives the
estimate of the whole fit as soon as a few batches have been timed.

The estimate is an upper bound: ``epochs`` full epochs at the measured pace; early stopping may
end sooner.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from tqdm.auto import tqdm

ESTIMATE_AFTER_BATCHES = 3  # batches timed before the first estimate (the first is often slow)


def format_seconds(seconds: float) -> str:
    """``42 s``, ``3 min 05 s``, ``1 h 02 min``: short and unambiguous in a log."""
    seconds = max(0.0, float(seconds))
    if seconds < 60:
        return f"{seconds:.0f} s" if seconds >= 10 else f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


class TrainingProgress:
    """Reports one fit; every method is a no-op when ``enabled`` is False."""

    def __init__(
        self,
        *,
        enabled: bool,
        epochs: int,
        batches_per_epoch: int,
        first_epoch: int = 1,
        description: str = "MADCluster",
        stream: TextIO | None = None,
    ) -> None:
        self.enabled = enabled
        self.epochs = epochs
        self.batches_per_epoch = batches_per_epoch
        self.first_epoch = first_epoch
        self.stream = stream if stream is not None else sys.stderr
        self.terminal = enabled and _is_terminal(self.stream)
        self.started = time.perf_counter()
        self.epoch_started = self.started
        self.epoch_seconds: list[float] = []
        self.estimated = False
        self.epoch_bar = tqdm(
            range(first_epoch, epochs + 1),
            desc=description,
            unit="epoch",
            file=self.stream,
            disable=not self.terminal,
        )
        self.batch_bar: tqdm | None = None

    # ------------------------------------------------------------------ hooks of the loop
    def begin_epoch(self, epoch: int) -> None:
        self.epoch_started = time.perf_counter()
        if self.terminal:
            self.batch_bar = tqdm(
                total=self.batches_per_epoch,
                desc=f"epoch {epoch}",
                unit="batch",
                leave=False,
                file=self.stream,
            )

    def batch_done(self, batch: int) -> None:
        """After batch ``batch`` (0-based) of the current epoch: the first estimate, once."""
        if self.batch_bar is not None:
            self.batch_bar.update(1)
        if not self.enabled or self.estimated:
            return
        timed = batch + 1
        if timed >= min(ESTIMATE_AFTER_BATCHES, self.batches_per_epoch):
            self.estimated = True
            per_batch = (time.perf_counter() - self.epoch_started) / timed
            epochs_left = self.epochs - self.first_epoch + 1
            total = per_batch * self.batches_per_epoch * epochs_left
            self._write(
                f"estimated training time: up to {format_seconds(total)} ({epochs_left} epochs x "
                f"{self.batches_per_epoch} batches at {per_batch:.2f} s per batch; early stopping "
                "may end sooner)"
            )

    def end_epoch(self, epoch: int, values: dict[str, float]) -> None:
        """After epoch ``epoch``: its values (loss, val, nu, R...), elapsed time and time left."""
        if self.batch_bar is not None:
            self.batch_bar.close()
            self.batch_bar = None
        if not self.enabled:
            return
        now = time.perf_counter()
        self.epoch_seconds.append(now - self.epoch_started)
        pace = sum(self.epoch_seconds) / len(self.epoch_seconds)
        left = pace * (self.epochs - epoch)
        shown = "  ".join(f"{name} {value:.4f}" for name, value in values.items())
        if self.terminal:
            self.epoch_bar.set_postfix_str(shown, refresh=False)
            self.epoch_bar.update(1)
            return
        self._write(
            f"epoch {epoch}/{self.epochs}: {shown}  ({self.epoch_seconds[-1]:.1f} s; elapsed "
            f"{format_seconds(now - self.started)}, left at most {format_seconds(left)})"
        )

    def close(self) -> None:
        if self.batch_bar is not None:
            self.batch_bar.close()
            self.batch_bar = None
        self.epoch_bar.close()

    def _write(self, line: str) -> None:
        if self.terminal:
            tqdm.write(line, file=self.stream)
        else:
            print(line, file=self.stream, flush=True)


#: Seconds between the plain progress lines of :func:`task_bar` in a log file or a pipe.
LINE_SECONDS = 30.0


class TaskLines:
    """What :func:`task_bar` gives when stderr is not a terminal: tqdm's ``update`` /
    ``set_postfix`` / ``close`` as plain lines (``tasks: 12/40 done=11 failed=1 (3 min 05 s)``),
    one at most every :data:`LINE_SECONDS` and one at the end, never carriage-return frames."""

    def __init__(
        self,
        *,
        total: int,
        initial: int = 0,
        desc: str = "tasks",
        unit: str = "task",
        enabled: bool = True,
        stream: TextIO | None = None,
        every: float = LINE_SECONDS,
    ) -> None:
        self.total, self.n, self.desc, self.unit, self.enabled = total, initial, desc, unit, enabled
        self.stream = stream if stream is not None else sys.stderr
        self.every, self.postfix = every, ""
        self.started = self.last = time.perf_counter()

    def set_postfix(
        self, values: dict | None = None, refresh: bool = True, **kwargs: object
    ) -> None:
        self.postfix = " ".join(f"{k}={v}" for k, v in {**(values or {}), **kwargs}.items())

    def set_postfix_str(self, text: str = "", refresh: bool = True) -> None:
        self.postfix = text

    def update(self, n: int = 1) -> None:
        self.n += n
        if time.perf_counter() - self.last >= self.every:
            self._line()

    def write(self, line: str) -> None:
        print(line, file=self.stream, flush=True)

    def close(self) -> None:
        if self.enabled and self.n:
            self._line()
        self.enabled = False

    def _line(self) -> None:
        self.last = time.perf_counter()
        if self.enabled:
            elapsed = format_seconds(self.last - self.started)
            extra = f" {self.postfix}" if self.postfix else ""
            print(
                f"{self.desc}: {self.n}/{self.total} {self.unit}s{extra} ({elapsed})",
                file=self.stream,
                flush=True,
            )


def task_bar(
    *,
    total: int,
    initial: int = 0,
    desc: str = "tasks",
    unit: str = "task",
    enabled: bool = True,
    stream: TextIO | None = None,
) -> object:
    """A tqdm bar over tasks on a terminal; elsewhere (a log file, a pipe) :class:`TaskLines`,
    so long runs write lines, not tqdm's redraw frames, into files (a log
    of redraw frames is unreadable)."""
    stream = stream if stream is not None else sys.stderr
    if enabled and _is_terminal(stream):
        return tqdm(total=total, initial=initial, desc=desc, unit=unit, file=stream)
    return TaskLines(
        total=total, initial=initial, desc=desc, unit=unit, enabled=enabled, stream=stream
    )


def _is_terminal(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # closed or a stand-in without isatty
        return False
