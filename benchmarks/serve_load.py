"""Bounded load test of ``madcluster serve`` on loopback: a fleet, one-row stream updates.

Fits a fleet of ``--models`` models (``--preset``, default ``streaming``; ``default`` streams with its
input terms, final scores L rows later; ``--epochs`` each; latency
does not depend on training) on demo series, starts the real server on the fleet folder in a
subprocess (loopback only), and runs ``--clients`` concurrent clients for ``--seconds``: client i
owns stream ``c<i>`` of model ``m<i % models>`` and posts its next ``--chunk`` rows (default one)
in a loop, as fast as answers come (a closed loop: it measures capacity, and its latency is mostly
queueing, about clients / throughput) and, with ``--rate``, paced at that many updates a second
per client (latency at a given load). Each load runs without and with ``--state-dir`` and reports:
requests, errors, requests/s, p50/p99 latency per update, the server's CPU per request and peak
memory (VmHWM), and that every stream's final scores (with its pending ones) equal ``decision_function`` on the rows that
stream was sent. The clients run in this process, on the same machine. Writes
``benchmarks/results/serve_load.json``::

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/serve_load.py --clients 16 --seconds 60 --models 4 --rate 10
"""

from __future__ import annotations

import argparse
import os
import signal
import tempfile
import threading
import time
from pathlib import Path

import httpx
import numpy as np
import torch
from benchlib import free_port, peak_memory_mb, start_server, write_record

from madcluster import MADCluster
from madcluster.data.synthetic import make_demo_data


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process so far (Linux /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def client_loop(url: str, stream: str, model: str, series: np.ndarray, chunk: int, stop_at: float, out: dict,
                rate: float = 0.0) -> None:
    """Post the stream's next ``chunk`` rows in a loop: as fast as answers come (``rate`` 0, a
    closed loop that measures capacity), or ``rate`` updates a second (a paced sensor feed)."""
    latencies, errors, sent, scores = [], 0, 0, []
    period = 1.0 / rate if rate > 0 else 0.0
    next_at = time.monotonic() + (np.random.default_rng(abs(hash(stream)) % 2**32).uniform(0, period) if period else 0.0)
    with httpx.Client(base_url=url, timeout=60) as client:
        while time.monotonic() < stop_at and sent + chunk <= len(series):
            if period:
                time.sleep(max(0.0, next_at - time.monotonic()))
                next_at += period
            start = time.perf_counter()
            response = client.post(f"/streams/{stream}", json={"rows": series[sent : sent + chunk].tolist(), "model": model})
            latencies.append(time.perf_counter() - start)
            if response.status_code != 200:
                errors += 1
                break
            scores.extend(response.json()["final_scores"])
            sent += chunk
        if sent:  # the steps not final yet (the default's last L rows), as they stand
            scores.extend(client.get(f"/streams/{stream}").json()["pending_scores"])
    out[stream] = {"latencies": latencies, "errors": errors, "sent": sent, "scores": scores}


def run_once(fleet: Path, models: dict, series: np.ndarray, args: argparse.Namespace, state_dir: Path | None,
             state_interval: float | None = None, rate: float = 0.0) -> dict:
    """One load run against a fresh server; its numbers."""
    port = free_port()
    extra = ("--state-dir", str(state_dir)) if state_dir is not None else ()
    if state_interval is not None:
        extra += ("--state-interval", str(state_interval))
    proc = start_server(fleet, port, *extra)
    names = sorted(models)
    results: dict = {}
    offsets = np.linspace(0, len(series) // 2, args.clients).astype(int)
    try:
        stop_at = time.monotonic() + args.seconds
        threads = [
            threading.Thread(target=client_loop, args=(f"http://127.0.0.1:{port}", f"c{i}", names[i % len(names)], series[o:], args.chunk, stop_at, results, rate))
            for i, o in enumerate(offsets)
        ]
        start, cpu_start = time.monotonic(), _cpu_seconds(proc.pid)
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.monotonic() - start
        cpu = _cpu_seconds(proc.pid)
        server_cpu = None if cpu is None or cpu_start is None else cpu - cpu_start
        peak = peak_memory_mb(proc.pid)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    latencies = np.concatenate([r["latencies"] for r in results.values()]) * 1e3
    worst = 0.0
    for i, o in enumerate(offsets):
        r = results[f"c{i}"]
        if r["sent"] >= args.window_size:
            offline = models[names[i % len(names)]].decision_function(series[o : o + r["sent"]])
            worst = max(worst, float(np.abs(np.asarray(r["scores"]) - offline).max()))
    saved = sorted(p.name for p in state_dir.glob("*.mcs")) if state_dir is not None else []
    return {
        "load": f"paced, {rate:g} updates/s per client" if rate else "closed loop (each client posts as soon as answered)",
        "state_dir": state_dir is not None, "state_interval_s": state_interval if state_interval is not None else (1.0 if state_dir else None),
        "seconds": round(elapsed, 1), "requests": len(latencies),
        "errors": int(sum(r["errors"] for r in results.values())),
        "requests_per_s": round(len(latencies) / elapsed, 1), "rows_per_s": round(len(latencies) * args.chunk / elapsed, 1),
        "p50_ms": round(float(np.percentile(latencies, 50)), 2), "p99_ms": round(float(np.percentile(latencies, 99)), 2),
        "max_ms": round(float(latencies.max()), 1),
        "server_cpu_ms_per_request": None if server_cpu is None else round(1e3 * server_cpu / len(latencies), 2),
        "server_peak_memory_mb": None if peak is None else round(peak, 1),
        "stream_vs_offline_max_abs_diff": worst, "stream_states_saved_at_shutdown": len(saved),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--models", type=int, default=4, help="models in the fleet")
    parser.add_argument("--chunk", type=int, default=1, help="rows per request")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--preset", default="streaming", help="the models' preset (default: the default model, input terms included)")
    parser.add_argument("--window-size", type=int, default=100)
    parser.add_argument("--per-update-saves", action="store_true", help="also a run with --state-interval 0")
    parser.add_argument("--rate", type=float, default=0.0,
                        help="also runs paced at this many updates/s per client (0: closed loop only)")
    parser.add_argument("--out", default="benchmarks/results/serve_load.json")
    args = parser.parse_args()
    torch.set_num_threads(1)
    demo = make_demo_data(n_train=3000, n_test=20000, seed=7)
    with tempfile.TemporaryDirectory() as tmp:
        fleet = Path(tmp) / "fleet"
        fleet.mkdir()
        models = {}
        for k in range(args.models):
            name = f"m{k}"
            models[name] = MADCluster.from_preset(args.preset, random_state=k, epochs=args.epochs, window_size=args.window_size).fit(demo.train)
            models[name].save(fleet / f"{name}.mcz")
        runs = []
        for rate in sorted({0.0, args.rate}, reverse=True):
            runs += [run_once(fleet, models, demo.test, args, None, rate=rate),
                     run_once(fleet, models, demo.test, args, Path(tmp) / f"state-{rate:g}", rate=rate)]
            if args.per_update_saves:  # the earlier behaviour, a write per update, for comparison
                runs.append(run_once(fleet, models, demo.test, args, Path(tmp) / f"state0-{rate:g}", state_interval=0, rate=rate))
    summary = {
        "command": (f"PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/serve_load.py --clients {args.clients} "
                    f"--seconds {args.seconds:g} --models {args.models} --chunk {args.chunk}"
                    + (f" --rate {args.rate:g}" if args.rate else "") + (" --per-update-saves" if args.per_update_saves else "")
                    + (f" --preset {args.preset}" if args.preset != "streaming" else "") + f" --out {args.out}"),
        "preset": args.preset,
        "clients": args.clients, "models": args.models, "rows_per_request": args.chunk, "runs": runs,
        "machine": {"cpu_count": os.cpu_count(), "load_avg_1min_after": round(os.getloadavg()[0], 2)},
    }
    write_record(args.out, summary)


if __name__ == "__main__":
    main()
