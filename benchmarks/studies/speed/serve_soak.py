"""A bounded soak of ``madcluster serve``: paced clients, refits and a restart, no error allowed.

Fits the default model (``random_state`` 0) on an 8-column series, starts the server on loopback
with a state folder, and runs ``--clients`` clients for ``--seconds``, each posting one row at a
time to its own stream at ``--rate`` updates a second. Every ``--refit-every`` seconds a client
posts a refit (400 recent rows of the same normal, ``wait``); halfway the server gets SIGTERM and
is started again on the same state folder (the clients wait for it and go on: their requests
during the restart are counted apart). Reports the errors (any answer but 200, outside the
restart; a refit in flight delays the restart, and a refit starts ``--refit-every`` seconds
after the last one began, once that one is done), the refits' states, p50 / p99 latency and the server's RSS in the first and the last
``--window`` seconds, each stream's step numbers (no gap, no repeat across refits and the
restart), and whether every state file reads back. Writes
``benchmarks/results/serve_soak.json``::

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/studies/speed/serve_soak.py
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/
from benchlib import RESULTS, free_port, start_server, write_record

from madcluster import MADCluster
from madcluster.estimator.streaming import StreamScorer

PERIODS = np.array([3.0, 5, 7, 11, 13, 17, 19, 23])


def series(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.sin(np.arange(n)[:, None] / PERIODS) + 0.1 * rng.standard_normal((n, len(PERIODS)))


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Soak:
    """The server process (replaced at the restart) and what the clients saw."""

    def __init__(self, model: Path, state: Path, port: int) -> None:
        self.model, self.state, self.port = model, state, port
        self.url = f"http://127.0.0.1:{port}"
        self.proc = start_server(model, port, "--state-dir", str(state))
        self.restarting = threading.Event()
        self.lock = threading.Lock()
        self.samples: list[tuple[float, float]] = []  # (time, latency)
        self.errors: list[str] = []
        self.during_restart = 0
        self.rss: list[tuple[float, float]] = []
        self.refits: list[dict] = []

    def client(self, i: int, stop_at: float, rate: float, rows: np.ndarray, steps: list) -> None:
        sent, period = 0, 1.0 / rate
        next_at = time.monotonic() + period * i / 16
        with httpx.Client(base_url=self.url, timeout=60) as http:
            while time.monotonic() < stop_at and sent < len(rows):
                time.sleep(max(0.0, next_at - time.monotonic()))
                next_at += period
                start = time.perf_counter()
                try:
                    answer = http.post(
                        f"/streams/c{i}", json={"rows": rows[sent : sent + 1].tolist()}
                    )
                except httpx.TransportError as exc:
                    if self.restarting.is_set():
                        with self.lock:
                            self.during_restart += 1
                        continue
                    with self.lock:
                        self.errors.append(f"c{i}: {type(exc).__name__}")
                    continue
                latency = time.perf_counter() - start
                if answer.status_code != 200:
                    if self.restarting.is_set() and answer.status_code == 503:
                        with self.lock:
                            self.during_restart += 1
                        continue
                    with self.lock:
                        self.errors.append(f"c{i}: {answer.status_code} {answer.text[:200]}")
                    continue
                steps.extend(answer.json()["steps"])
                sent += 1
                with self.lock:
                    self.samples.append((time.monotonic(), latency))

    def refit(self, rows: np.ndarray) -> None:
        with httpx.Client(base_url=self.url, timeout=600) as http:
            answer = http.post("/models/pump/refit", json={"rows": rows.tolist(), "wait": True})
            job = answer.json().get("refit") or {}
            self.refits.append({"status": answer.status_code, "state": job.get("state"),
                                "version": job.get("version"), "seconds": job.get("seconds"),
                                "streams_moved": job.get("streams_moved"), "error": job.get("error")})  # fmt: skip

    def restart(self) -> float:
        self.restarting.set()
        start = time.perf_counter()
        self.proc.terminate()
        self.proc.wait(timeout=120)
        self.proc = start_server(self.model, self.port, "--state-dir", str(self.state))
        self.restarting.clear()
        return time.perf_counter() - start


def _window(samples: list[tuple[float, float]], lo: float, hi: float) -> dict:
    values = np.array([lat for t, lat in samples if lo <= t < hi]) * 1e3
    if len(values) == 0:
        return {"requests": 0}
    return {"requests": len(values), "p50_ms": round(float(np.percentile(values, 50)), 1),
            "p99_ms": round(float(np.percentile(values, 99)), 1)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=180.0)
    parser.add_argument("--rate", type=float, default=4.0)
    parser.add_argument("--refit-every", type=float, default=60.0)
    parser.add_argument("--window", type=float, default=30.0)
    parser.add_argument("--out", default=str(RESULTS / "serve_soak.json"))
    args = parser.parse_args()

    columns = [f"c{i}" for i in range(len(PERIODS))]
    detector = MADCluster(random_state=0).fit(pd.DataFrame(series(3000, 0), columns=columns))
    with tempfile.TemporaryDirectory(prefix="serve-soak-") as tmp:
        model, state = Path(tmp) / "pump.mcz", Path(tmp) / "state"
        detector.save(model)
        soak = Soak(model, state, free_port())
        start = time.monotonic()
        stop_at = start + args.seconds
        steps = [[] for _ in range(args.clients)]
        clients = [
            threading.Thread(target=soak.client,
                             args=(i, stop_at, args.rate, series(100_000, 10 + i), steps[i]))
            for i in range(args.clients)
        ]  # fmt: skip
        for thread in clients:
            thread.start()
        next_refit, restarted, restart_seconds = start + args.refit_every, False, None
        refitting: threading.Thread | None = None
        while time.monotonic() < stop_at:
            soak.rss.append((time.monotonic(), rss_mb(soak.proc.pid)))
            idle = refitting is None or not refitting.is_alive()
            if idle and time.monotonic() >= next_refit:  # one refit at a time, off this loop
                rows = series(400, int(time.monotonic()))
                refitting = threading.Thread(target=soak.refit, args=(rows,))
                refitting.start()
                next_refit = time.monotonic() + args.refit_every
            elif idle and not restarted and time.monotonic() >= start + args.seconds / 2:
                restart_seconds, restarted = soak.restart(), True  # not during a refit
            time.sleep(1.0)
        if refitting is not None:
            refitting.join(timeout=600)
        for thread in clients:
            thread.join(timeout=120)
        soak.proc.terminate()
        soak.proc.wait(timeout=120)
        unreadable = []
        served = MADCluster.load(model)
        for path in sorted(state.glob("*.mcs")):
            try:
                StreamScorer.restore(served.model_, path)
            except Exception as exc:  # noqa: BLE001 (a stream of a kept refit: read by its model)
                kept = sorted((state / "models").glob("*.mcz"))
                if not any(_reads(p, path) for p in kept):
                    unreadable.append(f"{path.name}: {exc}")
        leftovers = [p.name for p in state.rglob(".*.tmp")]
    end = start + args.seconds
    gaps = [i for i, s in enumerate(steps) if s != list(range(len(s)))]
    first_rss = [m for t, m in soak.rss if t < start + args.window]
    last_rss = [m for t, m in soak.rss if t >= end - args.window]
    record = {
        "command": "PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/studies/speed/serve_soak.py"
        + f" --clients {args.clients} --seconds {args.seconds:g} --rate {args.rate:g}"
        + f" --refit-every {args.refit_every:g}",
        "machine": {"cpu_count": os.cpu_count(), "load_avg_1min_after": round(os.getloadavg()[0], 2)},
        "clients": args.clients, "seconds": args.seconds, "rate_per_client": args.rate,
        "errors": len(soak.errors), "error_samples": soak.errors[:10],
        "requests_refused_during_restart": soak.during_restart,
        "restart_seconds": None if restart_seconds is None else round(restart_seconds, 1),
        "refits": soak.refits,
        "streams_with_a_gap_or_repeat": gaps,
        "rows_answered": sum(len(s) for s in steps),
        "first_window": {**_window(soak.samples, start, start + args.window),
                         "rss_mb": round(float(np.mean(first_rss)), 1) if first_rss else None},
        "last_window": {**_window(soak.samples, end - args.window, end),
                        "rss_mb": round(float(np.mean(last_rss)), 1) if last_rss else None},
        "state_files_unreadable": unreadable, "temporary_files_left": leftovers,
    }  # fmt: skip
    write_record(args.out, record, configs={"default": {"preset": "default", "random_state": 0}})


def _reads(model_file: Path, state_file: Path) -> bool:
    try:
        StreamScorer.restore(MADCluster.load(model_file).model_, state_file)
    except Exception:  # noqa: BLE001
        return False
    return True


if __name__ == "__main__":
    main()
