"""Bounded load test of ``madcluster serve`` on loopback (issue 20 part 3).

Fits a model on the demo series (default settings but ``--epochs``; latency does not depend on
training), starts the real server in a subprocess, and runs ``--clients`` concurrent clients for
``--seconds``: each owns one stream and posts its next ``--chunk`` rows in a loop. Reports
throughput (requests/s, rows/s), p50/p99 request latency and errors, then checks that every
stream's scores equal ``decision_function`` on the rows that stream was sent (1e-5). Writes
``benchmarks/results/serve_load.json``::

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/serve_load.py --clients 16 --seconds 60
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import numpy as np
import torch

from madcluster import MADCluster
from madcluster.atomic import atomic_write_text
from madcluster.data.synthetic import make_demo_data


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start(model: Path, port: int) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src"), "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "madcluster", "serve", str(model), "--port", str(port), "--log-level", "warning"], env=env)
    for _ in range(300):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                return proc
        except httpx.TransportError:
            time.sleep(0.5)
    proc.kill()
    raise RuntimeError("server did not start")


def client_loop(url: str, stream: str, series: np.ndarray, chunk: int, stop_at: float, out: dict) -> None:
    latencies, errors, sent = [], 0, 0
    with httpx.Client(base_url=url, timeout=60) as client:
        scores: list[float] = []
        while time.monotonic() < stop_at and sent + chunk <= len(series):
            start = time.perf_counter()
            response = client.post(f"/streams/{stream}", json={"rows": series[sent : sent + chunk].tolist()})
            latencies.append(time.perf_counter() - start)
            if response.status_code != 200:
                errors += 1
                break
            scores.extend(response.json()["scores"])
            sent += chunk
    out[stream] = {"latencies": latencies, "errors": errors, "sent": sent, "scores": scores}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--chunk", type=int, default=10, help="rows per request")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--out", default="benchmarks/results/serve_load.json")
    args = parser.parse_args()
    torch.set_num_threads(1)
    demo = make_demo_data(n_train=3000, n_test=20000, seed=7)
    model = MADCluster(random_state=0, epochs=args.epochs).fit(demo.train)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "demo.mcz"
        model.save(path)
        port = _free_port()
        proc = _start(path, port)
        try:
            results: dict = {}
            stop_at = time.monotonic() + args.seconds
            offsets = np.linspace(0, len(demo.test) // 2, args.clients).astype(int)
            threads = [
                threading.Thread(target=client_loop, args=(f"http://127.0.0.1:{port}", f"c{i}", demo.test[o:], args.chunk, stop_at, results))
                for i, o in enumerate(offsets)
            ]
            start = time.monotonic()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            elapsed = time.monotonic() - start
            metrics = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=30).text
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(60)
    latencies = np.concatenate([r["latencies"] for r in results.values()]) * 1e3
    worst = 0.0
    for i, o in enumerate(offsets):
        r = results[f"c{i}"]
        if r["sent"]:
            offline = model.decision_function(demo.test[o : o + r["sent"]]) if r["sent"] >= model.window_size else None
            if offline is not None:
                worst = max(worst, float(np.abs(np.asarray(r["scores"]) - offline).max()))
    summary = {
        "command": f"PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/serve_load.py --clients {args.clients} --seconds {args.seconds:g} --chunk {args.chunk}",
        "clients": args.clients, "seconds": round(elapsed, 1), "rows_per_request": args.chunk,
        "requests": len(latencies), "errors": int(sum(r["errors"] for r in results.values())),
        "requests_per_s": round(len(latencies) / elapsed, 1), "rows_per_s": round(len(latencies) * args.chunk / elapsed, 1),
        "p50_ms": round(float(np.percentile(latencies, 50)), 1), "p99_ms": round(float(np.percentile(latencies, 99)), 1),
        "stream_vs_offline_max_abs_diff": worst,
        "machine": {"cpu_count": os.cpu_count(), "load_avg_1min_after": round(os.getloadavg()[0], 2)},
        "server_metrics_has_flags": "madcluster_flags_total" in metrics,
    }
    print(json.dumps(summary, indent=2))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.out, json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
