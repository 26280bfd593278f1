"""A served model replaced while the server runs: refits off the request path, streams handed over.

Why: after a deploy or a migration a metric's normal level changes for good, and a model trained
before it alarms until it is refitted. ``POST /models/{name}/refit`` refits the served model on
recent rows in a child process (its own interpreter, one torch thread, a lower priority: the
server's threads keep answering, and a refit that fails cannot take the server down), loads the
result off the request path and swaps it in under the store's lock (:meth:`StreamStore.swap_model
<madcluster.serve.registry.StreamStore.swap_model>`).

Each open stream of that model is then handed over (:func:`~madcluster.serve.streams.handover`): a
new stream of the new model replays the stream's last rows
(:func:`~madcluster.serve.streams.handover_rows`, kept by its
:class:`~madcluster.serve.streams.RowTail`), so its parts' trailing windows are full and the steps
not final yet get their final scores from the new model. Step numbers go on where they were (the
stream's ``offset``). From then on a stream's scores are the new model's ``decision_function`` on
the series from its first replayed row on; answers carry ``model_version`` so a client can tell
which model gave a score.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from madcluster.defaults import REFIT_EPOCHS
from madcluster.estimator.detector import MADCluster
from madcluster.exceptions import DataError, MADClusterError
from madcluster.serve.refit_checks import measure, model_problems, row_problems
from madcluster.serve.registry import StreamStore
from madcluster.serve.streams import Conflict

logger = logging.getLogger(__name__)
REFIT_THREADS = 1  # torch threads of the refit's child process (the server keeps the others)
REFIT_NICENESS = 10  # the child's priority below the server's where there is no idle class


@dataclass
class RefitJob:
    """One refit of a served model, as ``GET /models/{name}/refit`` shows it."""

    model: str
    rows: int
    epochs: int  # the refit's (from scratch: the model's own)
    from_scratch: bool
    version_from: int
    force: bool = False  # swapped in whatever the checks say
    state: str = "running"  # running, done, rejected (by the checks) or failed
    version: int | None = None  # the served version once done
    started: float = field(default_factory=time.time)  # unix seconds
    seconds: float | None = None
    streams_moved: int = 0
    saved_to: str | None = None
    error: str | None = None
    # the refitted model's flag rates, thresholds and score scale (refit_checks.measure)
    checks: dict[str, Any] | None = None
    done: threading.Event = field(default_factory=threading.Event, repr=False)

    def describe(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "done"}


class Refits:
    """The refits of the store's models: at most one at a time per model, each in a thread that
    waits on a child process and then swaps the result in."""

    def __init__(self, store: StreamStore, model_files: dict[str, Path] | None = None) -> None:
        self.store = store
        self.model_files = model_files or {}
        self._jobs: dict[str, RefitJob] = {}
        self._lock = threading.Lock()

    def status(self, name: str) -> RefitJob | None:
        self.store.model(name)  # unknown: NotFound
        return self._jobs.get(name)

    def start(
        self,
        name: str,
        rows: np.ndarray,
        epochs: int | None = None,
        from_scratch: bool = False,
        save: bool = False,
        force: bool = False,
    ) -> RefitJob:
        """Start refitting model ``name`` on ``rows`` (checked, in its column order; rows unfit
        to train on are a ``DataError`` unless ``force``); a refit of the same model already
        running is a ``Conflict``."""
        detector = self.store.model(name)
        if len(rows) < detector.window_size:
            raise DataError(
                f"a refit needs at least one window of rows ({detector.window_size}), "
                f"got {len(rows)}; send the recent normal rows, oldest first"
            )
        problems = [] if force else row_problems(detector, rows)
        if problems:
            raise DataError(
                f"refit of model {name!r} refused: {'; '.join(problems)}; send the recent normal "
                'rows, or "force": true to refit on these'
            )
        if save and name not in self.model_files:
            raise DataError(f"model {name!r} was not loaded from a file: nothing to save to")
        with self._lock:
            running = self._jobs.get(name)
            if running is not None and running.state == "running":
                raise Conflict(
                    f"model {name!r} is being refitted (started "
                    f"{time.time() - running.started:.0f} "
                    f"s ago): GET /models/{name}/refit until it is done, then refit again"
                )
            planned = detector.epochs if from_scratch else epochs or REFIT_EPOCHS
            job = RefitJob(name, len(rows), planned, from_scratch, self.store.versions[name], force)
            self._jobs[name] = job
        thread = threading.Thread(
            target=self._run, args=(job, detector, rows, save), name=f"refit-{name}", daemon=True
        )
        thread.start()
        return job

    def _run(self, job: RefitJob, detector: MADCluster, rows: np.ndarray, save: bool) -> None:
        start = time.perf_counter()
        try:
            recent = self.store.recent_rows(job.model)
            refitted, job.checks = refit_in_child(
                detector, rows, job.epochs, job.from_scratch, recent
            )
            problems = model_problems(job.checks)
            if problems and not job.force:
                job.state = "rejected"
                job.error = (
                    f"the refitted model was not swapped in: {'; '.join(problems)}; the served "
                    'model stays (refit on other rows, or send "force": true)'
                )
                logger.warning("refit of model %r rejected: %s", job.model, job.error)
                return
            if save:
                path = self.model_files[job.model]
                refitted.save(path)  # atomic: a restart serves the new model
                job.saved_to = str(path)
            job.version, job.streams_moved = self.store.swap_model(job.model, refitted, saved=save)
            job.state = "done"
            logger.info(
                "model %r refitted on %d rows in %.1f s: version %d, %d stream(s) handed over",
                job.model, job.rows, time.perf_counter() - start, job.version, job.streams_moved,
            )  # fmt: skip
        except Exception as exc:  # noqa: BLE001 (the job says why; the served model stays)
            job.state, job.error = "failed", str(exc) or type(exc).__name__
            logger.warning("refit of model %r failed: %s", job.model, job.error)
        finally:
            job.seconds = time.perf_counter() - start
            job.done.set()


def refit_in_child(
    detector: MADCluster,
    rows: np.ndarray,
    epochs: int | None,
    from_scratch: bool,
    recent: list[np.ndarray] | None = None,
) -> tuple[MADCluster, dict[str, Any]]:
    """``detector`` refitted on ``rows`` in a child Python process (``python -m
    madcluster.serve.swap``), read back, with the numbers the refit's checks judge
    (:func:`~madcluster.serve.refit_checks.measure`, on ``rows`` and the streams' ``recent``
    rows); a failed refit raises with the child's message."""
    with tempfile.TemporaryDirectory(prefix="madcluster-refit-") as tmp:
        source, data, out = Path(tmp, "model.mcz"), Path(tmp, "rows.npy"), Path(tmp, "new.mcz")
        detector.save(source)
        np.save(data, np.asarray(rows, dtype=np.float64), allow_pickle=False)
        tails = Path(tmp, "recent.npz")
        np.savez(tails, *[np.asarray(r, dtype=np.float64) for r in recent or ()])
        package_root = str(Path(__file__).resolve().parents[2])  # the madcluster being served
        path = os.environ.get("PYTHONPATH")
        env = {
            **os.environ,
            "PYTHONPATH": package_root + (os.pathsep + path if path else ""),
            "OMP_NUM_THREADS": str(REFIT_THREADS),
        }
        command = [sys.executable, "-m", "madcluster.serve.swap", str(source), str(data), str(out)]
        command += [
            str(epochs) if epochs is not None else "-",
            "scratch" if from_scratch else "warm",
            str(tails),
        ]
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
            raise MADClusterError(lines[-1] if lines else f"exit status {done.returncode}")
        checks = json.loads(Path(f"{out}.json").read_text(encoding="utf-8"))
        return MADCluster.load(out), checks


def below_the_server() -> None:
    """This process's scheduling below the server's, so its answers come first when cores are
    short: Linux's idle class (it runs only on otherwise idle cores), else niceness."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        if hasattr(os, "nice"):
            os.nice(REFIT_NICENESS)


def _child(source: str, data: str, out: str, epochs: str, mode: str, recent: str) -> None:
    """The child's side of :func:`refit_in_child`."""
    import torch

    below_the_server()
    torch.set_num_threads(REFIT_THREADS)
    detector, served = MADCluster.load(source), MADCluster.load(source)
    rows: Any = np.load(data, allow_pickle=False)
    names = getattr(detector, "feature_names_in_", None)
    frame = rows
    if names is not None:  # the served model keeps its column names
        import pandas as pd

        frame = pd.DataFrame(rows, columns=[str(n) for n in names])
    if mode == "scratch":
        detector.refit(frame, from_scratch=True)
    elif epochs == "-":
        detector.refit(frame)
    else:
        detector.refit(frame, epochs=int(epochs))
    with np.load(recent, allow_pickle=False) as tails:
        kept = [tails[k] for k in sorted(tails.files, key=lambda k: int(k.split("_")[-1]))]
    checks = measure(served, detector, rows, kept)
    detector.save(out)
    Path(f"{out}.json").write_text(json.dumps(checks), encoding="utf-8")


if __name__ == "__main__":
    try:
        _child(*sys.argv[1:7])
    except MADClusterError as exc:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        sys.exit(2)


__all__ = ["RefitJob", "Refits", "refit_in_child"]
