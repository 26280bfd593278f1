"""Issue 36 item 5: a served model refitted and swapped in while streams run; latency meanwhile.

Fits the default on the synthetic suite's seasonal base (6 channels, ``--train`` rows), starts the
real server on its file (a subprocess, loopback, one thread), and runs ``--clients`` paced clients
(``--rate`` one-row updates a second each) for ``--seconds``. At ``--refit-at`` seconds it posts
``--recent`` rows of a new normal (channels 0-2 moved by 2 training deviations) to ``POST
/models/m/refit`` and polls the refit's state. Reports p50 / p99 latency of the updates sent before
(after ``--warmup`` seconds, once the streams are open), during and after the refit, the refit's
seconds, and that every stream answered with model version 2 after it (steps numbered on, no error)::

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/studies/speed/serve_refit.py \
        --out benchmarks/results/serve_refit.json
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/: benchlib
from benchlib import free_port, start_server

from madcluster import MADCluster
from madcluster.data.synthetic import make_anomaly_suite

SWAP_SECONDS = 3.0  # the end of a refit: the new model loaded, the streams handed over


def client(url: str, stream: str, rows: np.ndarray, rate: float, stop_at: float, out: dict) -> None:
    """Post one row at a time, ``rate`` a second; keep (sent at, latency, version, step)."""
    records, period, next_at, i = [], 1.0 / rate, time.monotonic(), 0
    with httpx.Client(base_url=url, timeout=60) as http:
        while time.monotonic() < stop_at and i < len(rows):
            time.sleep(max(0.0, next_at - time.monotonic()))
            next_at += period
            sent_at, start = time.monotonic(), time.perf_counter()
            answer = http.post(f"/streams/{stream}", json={"rows": rows[i : i + 1].tolist()})
            latency = time.perf_counter() - start
            body = answer.json() if answer.status_code == 200 else {}
            records.append(
                (sent_at, latency, body.get("model_version", -1), (body.get("steps") or [-1])[0])
            )
            i += 1
    out[stream] = records


def phase_stats(records: list, start: float, end: float) -> dict:
    lat = np.array([r[1] for r in records if start <= r[0] < end]) * 1e3
    if not len(lat):
        return {"requests": 0}
    return {
        "requests": len(lat),
        "p50_ms": round(float(np.percentile(lat, 50)), 2),
        "p99_ms": round(float(np.percentile(lat, 99)), 2),
        "max_ms": round(float(lat.max()), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", type=int, default=4000)
    parser.add_argument("--recent", type=int, default=5000, help="rows the refit reads")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--rate", type=float, default=20.0, help="updates a second per client")
    parser.add_argument("--seconds", type=float, default=90.0)
    parser.add_argument("--refit-at", type=float, default=40.0)
    parser.add_argument("--warmup", type=float, default=15.0, help="seconds left out of 'before'")
    parser.add_argument(
        "--epochs", type=int, default=None, help="the first fit's epochs (default: the default's)"
    )
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--model", type=Path, default=None, help="keep (or reuse) the first fit here"
    )
    args = parser.parse_args()

    train = make_anomaly_suite("seasonal", n_train=args.train, n_test=4000, seed=0).train
    extra = {} if args.epochs is None else {"epochs": args.epochs}
    started = time.process_time()
    if args.model is not None and args.model.exists():
        model = MADCluster.load(args.model)  # a first fit kept from an earlier run
    else:
        model = MADCluster(random_state=0, **extra).fit(train)
        if args.model is not None:
            model.save(args.model)
    fit_cpu = time.process_time() - started
    recent = make_anomaly_suite("seasonal", n_train=args.recent, n_test=4000, seed=2).train.copy()
    recent[:, :3] += 2.0 * train[:, :3].std(axis=0)  # a new normal: three channels moved for good
    feed = recent
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "m.mcz")
        model.save(path)
        port = free_port()
        proc = start_server(path, port)
        url = f"http://127.0.0.1:{port}"
        results: dict = {}
        try:
            begin = time.monotonic()
            stop_at = begin + args.seconds
            threads = [
                threading.Thread(
                    target=client, args=(url, f"s{i}", feed[i * 37 :], args.rate, stop_at, results)
                )
                for i in range(args.clients)
            ]
            for t in threads:
                t.start()
            time.sleep(args.refit_at)
            refit_start = time.monotonic()
            answer = httpx.post(f"{url}/models/m/refit", json={"rows": recent.tolist()}, timeout=60)
            assert answer.status_code == 202, answer.text
            while True:
                job = httpx.get(f"{url}/models/m/refit", timeout=10).json()["refit"]
                if job["state"] != "running":
                    break
                time.sleep(0.2)
            refit_end = time.monotonic()
            for t in threads:
                t.join()
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(60)
    records = [r for rs in results.values() for r in rs]
    before = phase_stats(records, begin + args.warmup, refit_start)  # streams opened by then
    during = phase_stats(records, refit_start, refit_end)
    training = phase_stats(records, refit_start, refit_end - SWAP_SECONDS)  # the child's fit
    swapping = phase_stats(records, refit_end - SWAP_SECONDS, refit_end)  # load + handovers
    after = phase_stats(records, refit_end, stop_at)
    late = [r for r in records if r[0] >= refit_end + 1.0]
    record = {
        "command": "PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/studies/speed/serve_refit.py "
        + " ".join(sys.argv[1:]),
        "first_fit_cpu_s": round(fit_cpu, 1),
        "refit": job,
        "refit_wall_s": round(refit_end - refit_start, 1),
        "clients": args.clients,
        "rate_per_client": args.rate,
        "before": before,
        "during": during,
        "after": after,
        "during_training": training,
        "during_swap": swapping,
        "p99_during_over_before": round(during["p99_ms"] / before["p99_ms"], 2)
        if during.get("requests")
        else None,
        "p99_during_over_after": round(during["p99_ms"] / after["p99_ms"], 2)
        if after.get("requests")
        else None,
        "errors": sum(1 for r in records if r[2] == -1),
        "answers_after_refit_from_version_2": f"{sum(r[2] == 2 for r in late)} of {len(late)}",
    }
    print(json.dumps(record, indent=2))
    if args.out is not None:
        args.out.write_text(json.dumps(record, indent=2) + "\n")


if __name__ == "__main__":
    main()
