"""What one stream of the default model holds in a running server: its RSS growth over many new
streams, divided by their number.

Fits the default model (``random_state`` 0) on an 8-column series (sines of periods 3 to 23 plus
noise, 3,000 rows, seed 0), starts ``madcluster serve`` on loopback (one thread, no state folder,
``--max-stream-memory 0`` so nothing is parked), opens ``--warm`` streams so the server's own
buffers are in place, reads its VmRSS (``/proc``), opens ``--streams`` new streams, one request of
``--rows`` rows each (what a client looping over new ids costs), and reads VmRSS again: the growth
divided by ``--streams``. Then ``--long-streams`` streams fed ``--long-rows`` rows each, in
requests of ``--chunk`` rows, so their handover rows are full (a stream that has run for a while);
1,000 of them, as 200 left the growth to memory the updates' freed temporaries had left (53.8 and
38.9 KiB a stream in two runs of 200, counted 95.7 and 97.3).
Each run also gives the server's own count (``GET /health``: ``stream_memory_bytes``, what
``--max-stream-memory`` is held to) per stream, and ``held_by_rows`` what one stream of the model
holds in this process after ``--marks`` rows (fed ``--chunk`` at a time and compacted, as the
server does), by part (``madcluster.serve.footprint.held_by_part``) and its handover rows: with
series scales a stream keeps each part's reading of every step until the first
``series_scale_rows`` are final, so it holds most just before them. Writes
``benchmarks/results/serve_stream_memory.json``::

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/studies/speed/stream_memory.py
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/
from benchlib import RESULTS, free_port, start_server, write_record

from madcluster import MADCluster
from madcluster.serve.footprint import STREAM_OVERHEAD, compact, held_by_part
from madcluster.serve.streams import RowTail, handover_rows

COLUMNS = 8
PERIODS = np.array([3.0, 5, 7, 11, 13, 17, 19, 23])


def series(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    t = np.arange(n)[:, None]
    values = np.sin(t / PERIODS) + 0.1 * rng.standard_normal((n, COLUMNS))
    return pd.DataFrame(values, columns=[f"c{i}" for i in range(COLUMNS)])


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def feed(client: httpx.Client, prefix: str, count: int, rows: np.ndarray, chunk: int) -> None:
    for i in range(count):
        for lo in range(0, len(rows), chunk):
            answer = client.post(
                f"/streams/{prefix}{i}", json={"rows": rows[lo : lo + chunk].tolist()}
            )
            answer.raise_for_status()


def measure(url: str, pid: int, prefix: str, count: int, rows: np.ndarray, chunk: int) -> dict:
    with httpx.Client(base_url=url, timeout=120) as client:
        before_count = client.get("/health").json()["stream_memory_bytes"]
        time.sleep(0.5)
        before = rss_bytes(pid)
        start = time.perf_counter()
        feed(client, prefix, count, rows, chunk)
        seconds = time.perf_counter() - start
        time.sleep(0.5)
        after = rss_bytes(pid)
        health = client.get("/health").json()
    return {
        "streams": count,
        "rows_each": len(rows),
        "chunk": chunk,
        "rss_before_mb": round(before / 1e6, 1),
        "rss_after_mb": round(after / 1e6, 1),
        "rss_kib_per_stream": round((after - before) / count / 1024, 1),
        "counted_kib_per_stream": round(
            (health["stream_memory_bytes"] - before_count) / count / 1024, 1
        ),
        "seconds": round(seconds, 1),
    }


def held_by_rows(detector: MADCluster, rows: np.ndarray, chunk: int, marks: list[int]) -> dict:
    """KiB one stream of ``detector`` holds after each of ``marks`` rows of ``rows``, by part."""
    scorer, tail, out = detector.stream(), RowTail(handover_rows(detector), COLUMNS), {}
    for lo in range(0, max(marks), chunk):
        part = rows[lo : lo + chunk]
        scorer.update(part)
        tail.append(part)
        compact(scorer)
        if lo + len(part) in marks:
            held = {**held_by_part(scorer), "handover rows": tail.nbytes}
            held = {k: round(v / 1024, 1) for k, v in sorted(held.items()) if v}
            total = sum(held.values()) + STREAM_OVERHEAD / 1024
            out[str(lo + len(part))] = {"arrays_kib": held, "counted_kib": round(total, 1)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--rows", type=int, default=1)
    parser.add_argument("--warm", type=int, default=100)
    parser.add_argument("--long-streams", type=int, default=1000)
    parser.add_argument("--long-rows", type=int, default=1100)
    parser.add_argument("--chunk", type=int, default=100)
    parser.add_argument("--marks", default="100,1100,2900,3100", help="rows, comma-separated")
    parser.add_argument("--out", default=str(RESULTS / "serve_stream_memory.json"))
    args = parser.parse_args()

    train = series(3000, 0)
    start = time.perf_counter()
    detector = MADCluster(random_state=0).fit(train)
    fit_seconds = time.perf_counter() - start
    rows = series(args.long_rows + 1000, 1).to_numpy()[1000:]
    marks = [int(m) for m in args.marks.split(",")]
    more = series(max(marks) + 1000, 1).to_numpy()[1000:]
    by_rows = held_by_rows(detector, more, args.chunk, marks)
    with tempfile.TemporaryDirectory(prefix="stream-memory-") as tmp:
        path = Path(tmp) / "pump.mcz"
        detector.save(path)
        port = free_port()
        proc = start_server(path, port, "--max-stream-memory", "0", "--stream-idle-seconds", "0")
        url = f"http://127.0.0.1:{port}"
        try:
            with httpx.Client(base_url=url, timeout=120) as client:
                feed(client, "warm", args.warm, rows[: args.rows], args.rows)
                feed(client, "warmlong", 5, rows, args.chunk)
            new = measure(url, proc.pid, "new", args.streams, rows[: args.rows], args.rows)
            long = measure(url, proc.pid, "long", args.long_streams, rows, args.chunk)
        finally:
            proc.terminate()
            proc.wait(timeout=60)
    record = {
        "command": "PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/studies/speed/stream_memory.py",
        "what": "server RSS growth per stream of the default model on 8 columns: new streams "
        "(one request each) and streams fed enough rows to fill their handover rows",
        "machine": {"python": platform.python_version(), "processor": platform.machine()},
        "model": {
            "columns": COLUMNS,
            "window_size": int(detector.window_size),
            "fit_seconds": round(fit_seconds, 1),
        },
        "new_streams": new,
        "long_streams": long,
        "held_by_rows": by_rows,
    }
    write_record(args.out, record, configs={"default": {"preset": "default", "random_state": 0}})


if __name__ == "__main__":
    main()
