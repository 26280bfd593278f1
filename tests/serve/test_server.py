"""The real server on a loopback port, talked to with a real HTTP client."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from madcluster import MADCluster

pytestmark = pytest.mark.slow  # a real server in a subprocess, models fitted per module

SRC = str(Path(__file__).resolve().parents[2] / "src")
COLUMNS = ["cpu", "mem"]


def _series(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    return np.stack([np.sin(2 * np.pi * t / 13.0), np.cos(2 * np.pi * t / 31.0)], axis=1) + 0.1 * rng.standard_normal((n, 2))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """``python -m madcluster serve`` in a subprocess, on a free loopback port."""

    def __init__(self, model: Path, *extra: str) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "PYTHONPATH": SRC, "OMP_NUM_THREADS": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "madcluster", "serve", str(model), "--port", str(self.port), "--log-level", "warning", *extra],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {self.proc.stdout.read()}")
            try:
                if httpx.get(self.url + "/health", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.3)
        self.stop()
        raise RuntimeError("server did not start within 90 s")

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=60)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


@pytest.fixture(scope="module")
def model_file(tmp_path_factory) -> Path:
    import pandas as pd

    path = tmp_path_factory.mktemp("model") / "pump.mcz"
    MADCluster(input_terms=None, window_size=16, epochs=1, random_state=0).fit(pd.DataFrame(_series(500, 0), columns=COLUMNS)).save(path)
    return path


@pytest.fixture(scope="module")
def state_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("state")


@pytest.fixture(scope="module")
def server(model_file, state_dir):
    """One server for the module; the last test stops it with SIGTERM and restarts it."""
    srv = Server(model_file, "--max-body-bytes", "2000000", "--max-rows", "40000", "--state-dir", str(state_dir))
    yield srv
    srv.stop()


def test_health_models_and_batch_scores(server, model_file):
    client = httpx.Client(base_url=server.url, timeout=30)
    assert client.get("/health").json() == {"status": "ok", "models": ["pump"], "streams": 0,  # first test
                                            "expired_streams": 0, "max_streams": 10000,
                                            "stream_memory_bytes": 0, "max_stream_memory": 2**30}
    info = client.get("/models").json()["models"]["pump"]
    assert info["columns"] == COLUMNS and info["streams"] is True
    x = _series(100, 1)
    body = client.post("/models/pump/score", json={"rows": x[:, ::-1].tolist(), "columns": COLUMNS[::-1]}).json()
    model = MADCluster.load(model_file)
    np.testing.assert_allclose(body["scores"], model.decision_function(x), atol=1e-9)
    assert body["flags"] == (np.asarray(body["scores"]) > model.threshold_).tolist()


def test_stream_scores_equal_offline_scores(server, model_file):
    client = httpx.Client(base_url=server.url, timeout=30)
    x = _series(120, 2)
    x[70:75, 0] += 3.0
    scores, i, rng = [], 0, np.random.default_rng(0)
    while i < len(x):
        size = int(rng.integers(1, 12))
        response = client.post("/streams/line-7", json={"rows": x[i : i + size].tolist()})
        assert response.status_code == 200, response.text
        assert response.json()["steps"] == list(range(i, min(i + size, len(x))))
        scores.extend(response.json()["scores"])
        i += size
    np.testing.assert_allclose(scores, MADCluster.load(model_file).decision_function(x), atol=1e-5, rtol=0)
    assert client.get("/streams/line-7").json()["steps_seen"] == 120
    metrics = client.get("/metrics").text
    assert 'madcluster_requests_total{endpoint="/streams/{stream_id}",method="POST",status="200"}' in metrics
    assert 'madcluster_rows_scored_total{model="pump"}' in metrics and "madcluster_flags_total" in metrics
    assert "madcluster_request_seconds_bucket" in metrics
    conflict = client.post("/streams/line-7", json={"rows": [[0.0, 0.0]], "model": "pump2"})
    assert conflict.status_code == 409 and "scores with model 'pump'" in conflict.json()["error"]
    assert client.delete("/streams/line-7").json()["closed"] is True


@pytest.mark.parametrize(
    ("method", "path", "content", "status", "says"),
    [
        ("post", "/models/pump/score", '{"rows": [[1, 2, 3]]}', 400, "needs 2 values"),
        ("post", "/models/pump/score", '{"rows": [[1, 2]], "columns": ["cpu", "disk"]}', 400, "missing ['mem']"),
        ("post", "/streams/a", '{"rows": [[NaN, 1.0]]}', 400, "NaN"),
        ("post", "/models/nope/score", '{"rows": [[1, 2]]}', 404, "unknown model 'nope'"),
        ("get", "/streams/never-opened", None, 404, "unknown stream"),
        ("post", "/streams/a", '{"rows": [[1, 2]', 400, "not valid JSON"),
        ("post", "/streams/a", '{"rows": "abc"}', 422, "rows"),
        ("post", "/streams/b", '{"rows": [[1, 2]], "model": "other"}', 404, "unknown model 'other'"),
        ("get", "/streams/a", None, 404, "unknown stream"),  # refused requests open no stream
        ("post", "/models/pump/score", '{"rows": [[1, 2]]}', 400, "fewer than one window"),
        ("post", "/streams/-bad", '{"rows": [[1, 2]]}', 400, "stream id"),
        ("post", "/models/pump/score", '{"rows": [' + "[1.0, 2.0]," * 200_000 + "[1, 2]]}", 413, "over the limit"),
        ("get", "/nowhere", None, 404, "no endpoint"),
    ],
)
def test_bad_requests_get_a_4xx_json_error_naming_the_problem(server, method, path, content, status, says):
    response = httpx.request(method.upper(), server.url + path, content=content, timeout=30,
                             headers={"content-type": "application/json"})
    assert response.status_code == status, response.text
    assert says in response.json()["error"]
    assert "Traceback" not in response.text


def test_sigterm_finishes_requests_in_flight_and_streams_survive_a_restart(server, model_file, state_dir):
    x = _series(150, 3)
    expected = MADCluster.load(model_file).decision_function(x)
    srv = server
    try:
        first = httpx.post(srv.url + "/streams/s1", json={"rows": x[:90].tolist()}, timeout=30).json()["scores"]
        slow: dict = {}
        big = _series(30_000, 4).tolist()  # a batch that takes a while to score

        def send() -> None:
            slow["response"] = httpx.post(srv.url + "/models/pump/score", json={"rows": big}, timeout=120)
            slow["done"] = time.monotonic()

        thread = threading.Thread(target=send)
        thread.start()
        time.sleep(1.0)  # the request is in flight (parsing and scoring take seconds)
        sigterm = time.monotonic()
        assert srv.stop() in (0, -signal.SIGTERM)  # uvicorn re-raises SIGTERM once it has shut down
        thread.join(60)
        assert slow["done"] > sigterm, "the request finished before SIGTERM: the test proves nothing"
        assert slow["response"].status_code == 200 and len(slow["response"].json()["scores"]) == 30_000
    finally:
        srv.stop()
    srv = Server(model_file, "--state-dir", str(state_dir))
    try:
        assert httpx.get(srv.url + "/streams/s1", timeout=30).json()["steps_seen"] == 90
        rest = httpx.post(srv.url + "/streams/s1", json={"rows": x[90:].tolist()}, timeout=30).json()["scores"]
    finally:
        srv.stop()
    np.testing.assert_allclose(first + rest, expected, atol=1e-5, rtol=0)
