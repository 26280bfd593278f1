"""The one-row stream update answered without FastAPI gives what the FastAPI route gives."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient

from madcluster import MADCluster
from madcluster.serve import fast_updates
from madcluster.serve.app import create_app
from madcluster.serve.fast_updates import parse_update
from madcluster.serve.registry import StreamStore


def _series(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.sin(np.arange(n)[:, None] / np.array([3.0, 7.0])) + 0.1 * rng.standard_normal((n, 2))


@pytest.fixture(scope="module")
def models():
    model = MADCluster(input_terms=None, window_size=12, epochs=1, random_state=0).fit(_series(300, 0))
    return {"a": model, "b": model}


ROWS = _series(40, 1).tolist()
REQUESTS = [  # (stream, body): updates, then errors of each kind
    *[("s1", {"rows": [row], "model": "a"}) for row in ROWS[:20]],
    ("s2", {"rows": ROWS[:3], "model": "b", "columns": ["x1", "x0"]}),
    ("s1", {"rows": [ROWS[0]], "model": "b"}),  # another model for an open stream: 409
    ("s3", {"rows": [ROWS[0]], "model": "nope"}),  # unknown model: 404
    ("s4", {"rows": [ROWS[0][:1]], "model": "a"}),  # one value short: 400
    ("bad id!", {"rows": [ROWS[0]], "model": "a"}),  # 400
    ("s5", {"rows": [ROWS[0]]}),  # no model, two served: 400
    ("s6", {"rows": [[1, True]], "model": "a"}),  # a bool: left to pydantic
    ("s7", {"rows": "x", "model": "a"}),  # 422 from the app
    ("s8", {"rows": [], "model": "a"}),
]


def _answers(models, fast: bool, monkeypatch) -> list[tuple[int, dict]]:
    if not fast:
        monkeypatch.setattr(fast_updates, "parse_update", lambda body, max_rows: None)
    with TestClient(create_app(StreamStore(dict(models)))) as client:  # the lifespan stops the store
        out = [(r.status_code, r.json()) for r in (client.post(f"/streams/{s}", json=body) for s, body in REQUESTS)]
        metrics = client.get("/metrics").text
    assert 'endpoint="/streams/{stream_id}"' in metrics and "madcluster_rows_scored_total" in metrics
    monkeypatch.undo()
    return out


def test_fast_path_answers_as_the_fastapi_route(models, monkeypatch):
    fast = _answers(models, True, monkeypatch)
    slow = _answers(models, False, monkeypatch)
    assert [status for status, _ in fast] == [status for status, _ in slow]
    assert fast == slow
    assert {status for status, _ in fast} >= {200, 400, 404, 409, 422}
    x = np.asarray(ROWS[:20])
    np.testing.assert_allclose([body["scores"][0] for _, body in fast[:20]], models["a"].decision_function(x), atol=1e-9, rtol=0)


def test_only_plain_small_updates_take_the_fast_path():
    assert parse_update(b'{"rows": [[1.0, 2]], "model": "a"}', 16) == ([[1.0, 2]], "a", None)
    for body in (b"[1]", b"{", b'{"rows": [[true]]}', b'{"rows": [[1]], "model": 3}',
                 b'{"rows": [[1]], "columns": [1]}', b'{"rows": [[' + str(2**60).encode() + b"]]}"):
        assert parse_update(body, 16) is None, body
    assert parse_update(b'{"rows": ' + str([[1.0]] * 17).encode() + b"}", 16) is None
