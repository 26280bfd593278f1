"""What large requests do to ``madcluster serve``: status, time and the server's peak memory.

Starts the real server (loopback) on one streaming model fitted on the demo series and sends, three
at once, batch-score requests of ``--rows`` rows each (default 100,000 rows of the demo's 8 columns:
6.1 MB of JSON, under the 8 MiB body limit; over the row limit, so refused with 413 before
parsing), then three at once at the row limit (the server's default --max-rows: two are scored,
the third is over the rows-in-flight budget of 2 x --max-rows, 503). Reports each request's status and seconds and the server's peak resident
memory (VmHWM) before and after. Writes ``benchmarks/results/serve_big_requests.json``::

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/studies/models/serve_big_requests.py
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import numpy as np
import torch

from madcluster import MADCluster
from madcluster.data.synthetic import make_demo_data
from madcluster.serve.limits import DEFAULT_MAX_ROWS

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/: benchlib
from benchlib import free_port, peak_memory_mb, start_server, write_record


def three_at_once(url: str, body: bytes) -> list[dict]:
    out: list[dict] = [{} for _ in range(3)]

    def send(i: int) -> None:
        start = time.perf_counter()
        response = httpx.post(url + "/models/model/score", content=body, headers={"content-type": "application/json"}, timeout=300)
        out[i] = {"status": response.status_code, "seconds": round(time.perf_counter() - start, 2),
                  "error": response.json().get("error") if response.status_code != 200 else None}

    threads = [threading.Thread(target=send, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
        time.sleep(0.05)
    for t in threads:
        t.join()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--out", default="benchmarks/results/serve_big_requests.json")
    args = parser.parse_args()
    torch.set_num_threads(1)
    demo = make_demo_data(n_train=3000, n_test=1000, seed=7)
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.mcz"
        MADCluster.from_preset("streaming", random_state=0, epochs=1).fit(demo.train).save(path)
        port = free_port()
        proc = start_server(path, port)
        url = f"http://127.0.0.1:{port}"
        try:
            idle = peak_memory_mb(proc.pid)
            big = json.dumps({"rows": np.round(rng.normal(size=(args.rows, demo.train.shape[1])), 3).tolist()}).encode()
            over = three_at_once(url, big)
            after_over = peak_memory_mb(proc.pid)
            limit = json.dumps({"rows": np.round(rng.normal(size=(DEFAULT_MAX_ROWS, demo.train.shape[1])), 3).tolist()}).encode()
            at_limit = three_at_once(url, limit)
            after_limit = peak_memory_mb(proc.pid)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(60)
    summary = {
        "command": "PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/studies/models/serve_big_requests.py" + (f" --rows {args.rows}" if args.rows != 100_000 else ""),
        "body_mb": {"over_limit": round(len(big) / 1e6, 1), "at_limit": round(len(limit) / 1e6, 1)},
        f"three_at_once_{args.rows}_rows": over, f"three_at_once_{DEFAULT_MAX_ROWS}_rows": at_limit,
        "server_peak_memory_mb": {"idle": idle, "after_over_limit": after_over, "after_at_limit": after_limit},
        "machine": {"cpu_count": os.cpu_count(), "load_avg_1min_after": round(os.getloadavg()[0], 2)},
    }
    write_record(args.out, summary)


if __name__ == "__main__":
    main()
