"""The refitted models a state folder keeps, on their own: what ``keep`` returns is what
``entries`` reads back, into a folder not made yet (the mutation run's survivors: the server
makes the state folder first and never reads ``keep``'s answer)."""

from __future__ import annotations

import json

import pytest
from series_helpers import three_channels

from madcluster import MADCluster
from madcluster.serve.kept import KEPT_FOLDER, KeptModel, KeptModels, fingerprint


@pytest.fixture(scope="module")
def model():
    return MADCluster(input_terms=None, window_size=12, epochs=1, random_state=0).fit(
        three_channels(200, 0)
    )


def test_keep_answers_what_entries_read_back(model, tmp_path):
    state = tmp_path / "not" / "made"
    kept = KeptModels(state)
    entry = kept.keep("pump", 3, model, "base-print")
    folder = state / KEPT_FOLDER
    assert entry == KeptModel("pump", 3, fingerprint(model), "base-print", folder / "pump.v3.mcz")
    assert kept.entries() == [entry] and kept.entries("pump") == [entry]
    assert json.loads((folder / "pump.v3.json").read_text(encoding="utf-8")) == {
        "model": "pump",
        "version": 3,
        "fingerprint": fingerprint(model),
        "based_on": "base-print",
    }
    assert fingerprint(entry.load()) == fingerprint(model)
