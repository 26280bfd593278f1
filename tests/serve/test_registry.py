"""The server's model and stream registry without HTTP: fleets, defaults, conflicts, state files."""

from __future__ import annotations

import numpy as np
import pytest

from madcluster import MADCluster
from madcluster.exceptions import DataError, ModelFileError
from madcluster.serve.models import load_models
from madcluster.serve.registry import StreamStore
from madcluster.serve.streams import Conflict, NotFound


def _series(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.sin(np.arange(n)[:, None] / np.array([3.0, 7.0])) + 0.1 * rng.standard_normal((n, 2))


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fleet")
    for seed, name in enumerate(("pump-a", "pump-b")):
        MADCluster(input_terms=None, window_size=12, epochs=1, random_state=seed).fit(_series(200, seed)).save(folder / f"{name}.mcz")
    return folder


def test_fleet_streams_pick_the_entity_model_and_refuse_ambiguity(fleet):
    store = StreamStore(load_models(fleet))
    assert sorted(store.models) == ["pump-a", "pump-b"]
    x = _series(40, 5)
    outcome = store.update("pump-b", None, x.tolist(), None)
    assert (outcome.model, outcome.version) == ("pump-b", 1)
    np.testing.assert_allclose(outcome.result.scores, store.models["pump-b"].decision_function(x), atol=1e-5, rtol=0)
    with pytest.raises(DataError, match="name the model"):
        store.update("line-9", None, x[:2].tolist(), None)
    with pytest.raises(Conflict, match="scores with model 'pump-b'"):
        store.update("pump-b", "pump-a", x[:2].tolist(), None)
    with pytest.raises(NotFound, match="unknown model"):
        store.update("line-9", "pump-z", x[:2].tolist(), None)
    assert len(store) == 1, "refused requests open no stream"


def test_state_folder_restores_streams_and_refuses_strangers(fleet, tmp_path):
    models = load_models(fleet)
    store = StreamStore(models, tmp_path)
    x = _series(60, 6)
    first = store.update("s", "pump-a", x[:25].tolist(), None).result.scores
    store.stop()  # a clean shutdown saves what changed since the last interval
    again = StreamStore(models, tmp_path)
    rest = again.update("s", None, x[25:].tolist(), None).result.scores
    np.testing.assert_allclose(np.concatenate([first, rest]), models["pump-a"].decision_function(x), atol=1e-5, rtol=0)
    with pytest.raises(ModelFileError, match="belongs to none of the loaded models"):
        StreamStore({"pump-b": models["pump-b"]}, tmp_path)
