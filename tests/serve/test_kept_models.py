"""The refitted models a state folder keeps, on their own: what ``keep`` returns is what
``entries`` reads back, into a folder not made yet (the mutation run's survivors: the server
makes the state folder first and never reads ``keep``'s answer)."""

from __future__ import annotations

import json
import logging

import pytest
from series_helpers import three_channels

from madcluster import MADCluster
from madcluster.serve.kept import KEPT_FOLDER, KeptModel, KeptModels, fingerprint, served_models
from madcluster.serve.registry import StreamStore
from madcluster.serve.streams import StateFolder


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


def test_every_stream_of_a_kept_refit_moves_to_a_replaced_model_file(model, tmp_path, caplog):
    """Two streams saved under a refit the file does not hold, the file then replaced: both are
    handed over at start (the kept refit is read once, for the first, and kept for the next),
    logged, and saved under the new model at once (the kept refit is deleted: a second restart
    must not need it)."""
    refit, deployed = (
        MADCluster(input_terms=None, window_size=12, epochs=1, random_state=seed).fit(
            three_channels(200, seed, 1.0)
        )
        for seed in (1, 2)
    )
    served, state = tmp_path / "m.mcz", tmp_path / "state"
    model.save(served)
    store = StreamStore({"m": MADCluster.load(served)}, state)
    for stream_id, n in (("a", 1100), ("b", 40)):  # a: longer than the rows a handover replays
        store.update(stream_id, None, three_channels(n, 3).tolist(), None)
    store.swap_model("m", refit)
    store.stop()
    deployed.save(served)
    with caplog.at_level(logging.INFO, logger="madcluster.serve.registry"):
        again = StreamStore({"m": MADCluster.load(served)}, state)
    assert again.versions["m"] == 3
    assert [(again.get(s).version, again.get(s).steps_seen) for s in "ab"] == [(3, 1100), (3, 40)]
    assert [r.getMessage() for r in caplog.records if r.name == "madcluster.serve.registry"] == [
        f"stream {s!r}: saved under a former version of model 'm', handed over to version 3"
        for s in "ab"
    ]
    assert [(e.version, e.fingerprint) for e in KeptModels(state).entries()] == [
        (3, fingerprint(deployed))  # the refit went; the file's model keeps its number
    ]
    assert {StateFolder(state).fingerprint(s) for s in "ab"} == {fingerprint(deployed)}
    again.stop()
    third = StreamStore({"m": MADCluster.load(served)}, state)  # needs no kept refit
    assert [third.get(s).steps_seen for s in "ab"] == [1100, 40]


def test_dropping_older_versions_of_one_model_leaves_the_others(model, tmp_path):
    kept = KeptModels(tmp_path)
    for name, version in (("a", 1), ("a", 2), ("a", 3), ("b", 1)):
        kept.keep(name, version, model, "base")
    assert kept.drop_older("a", 3) == 2
    assert [(e.name, e.version) for e in kept.entries()] == [("a", 3), ("b", 1)]
    assert sorted(p.name for p in (tmp_path / KEPT_FOLDER).iterdir()) == [
        "a.v3.json",
        "a.v3.mcz",
        "b.v1.json",
        "b.v1.mcz",
    ]
    assert kept.drop_older("b", 1) == 0


def _fit(seed: int) -> MADCluster:
    return MADCluster(input_terms=None, window_size=12, epochs=1, random_state=seed).fit(
        three_channels(200, seed, 0.5)
    )


def test_a_restart_serves_each_models_own_kept_refit(model, tmp_path, caplog):
    """A fleet: only ``b`` was refitted; ``a`` (first) is served from its file, ``b`` its refit."""
    other, refit = _fit(1), _fit(2)
    kept = KeptModels(tmp_path)
    entry = kept.keep("b", 2, refit, fingerprint(other))
    with caplog.at_level(logging.INFO, logger="madcluster.serve.kept"):
        served, versions, others = served_models({"a": model, "b": other}, kept)
    assert [r.getMessage() for r in caplog.records] == [
        (
            f"model 'b': serving its refit kept in {entry.path} (version 2), which its file "
            "does not hold"
        )
    ]
    assert served["a"] is model and fingerprint(served["b"]) == fingerprint(refit)
    assert versions == {"a": 1, "b": 2}
    assert others == {fingerprint(other): ("b", other)}


def test_every_older_kept_version_is_a_model_streams_may_be_saved_under(model, tmp_path):
    """A crash left three kept versions: the latest is served, the two before it and the file's
    model are the ones a stream may still be saved under."""
    kept = KeptModels(tmp_path)
    entries = [kept.keep("m", v, _fit(v), fingerprint(model)) for v in (2, 3, 4)]
    served, versions, others = served_models({"m": model}, kept)
    assert fingerprint(served["m"]) == entries[-1].fingerprint and versions == {"m": 4}
    assert others == {
        entries[0].fingerprint: ("m", entries[0]),
        entries[1].fingerprint: ("m", entries[1]),
        fingerprint(model): ("m", model),
    }


def test_a_replaced_file_is_served_as_the_next_version(model, tmp_path, caplog):
    kept = KeptModels(tmp_path)
    entry = kept.keep("m", 2, _fit(2), "the fingerprint of a former file")
    with caplog.at_level(logging.INFO, logger="madcluster.serve.kept"):
        served, versions, others = served_models({"m": model}, kept)
    assert served["m"] is model and versions == {"m": 3}
    assert others == {entry.fingerprint: ("m", entry)}
    base = fingerprint(model)
    assert [(e.version, e.fingerprint, e.based_on) for e in kept.entries()] == [
        (2, entry.fingerprint, "the fingerprint of a former file"),
        (3, base, base),  # its number, for the next restart
    ]
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        (
            "WARNING",
            (
                "model 'm': its file changed since version 2 was refitted; serving the file as "
                "version 3, the streams of version 2 are handed over to it"
            ),
        )
    ]


def test_a_refit_saved_then_one_not_saved_comes_back_as_the_second(model, tmp_path):
    """The unsaved refit descends from the file the saved one wrote: a restart serves it."""
    saved, unsaved = _fit(5), _fit(6)
    served, state = tmp_path / "m.mcz", tmp_path / "state"
    model.save(served)
    store = StreamStore({"m": MADCluster.load(served)}, state)
    store.update("s", None, three_channels(40, 3).tolist(), None)
    saved.save(served)  # what a refit with "save": true writes
    assert store.swap_model("m", saved, saved=True)[0] == 2
    assert store.swap_model("m", unsaved)[0] == 3
    store.stop()
    again = StreamStore({"m": MADCluster.load(served)}, state)
    assert again.versions["m"] == 3 and fingerprint(again.models["m"]) == fingerprint(unsaved)
    assert again.get("s").version == 3


def test_a_failed_save_after_a_swap_keeps_the_former_versions_and_says_why(
    model, tmp_path, monkeypatch, caplog
):
    store = StreamStore({"m": model}, tmp_path, save_interval=0)
    store.update("s", None, three_channels(40, 3).tolist(), None)
    store.swap_model("m", _fit(7))  # version 2 kept

    def no_space():
        raise OSError("No space left on device")

    monkeypatch.setattr(store, "flush", no_space)
    with caplog.at_level(logging.WARNING, logger="madcluster.serve.registry"):
        assert store.swap_model("m", _fit(8))[0] == 3
    assert [r.getMessage() for r in caplog.records] == [
        "kept the former model versions: saving the streams failed: No space left on device"
    ]
    assert [e.version for e in KeptModels(tmp_path).entries("m")] == [2, 3]


def test_a_swap_drops_only_its_own_models_older_kept_versions(model, tmp_path):
    store = StreamStore({"a": model, "b": model}, tmp_path)
    store.swap_model("b", _fit(9))  # b's version 2: served, kept
    store.swap_model("a", _fit(10))
    store.swap_model("a", _fit(11))  # a's version 3: a's version 2 goes, b's stays
    assert [(e.name, e.version) for e in KeptModels(tmp_path).entries()] == [("a", 3), ("b", 2)]


def test_unreadable_records_are_skipped_and_named(model, tmp_path, caplog):
    kept = KeptModels(tmp_path)
    good = kept.keep("c", 2, model, "base")
    folder = tmp_path / KEPT_FOLDER
    (folder / "a.v1.json").write_text("{not json", encoding="utf-8")
    (folder / "b.v1.json").write_text(json.dumps({"model": "b", "version": 1}), encoding="utf-8")
    gone = {"model": "b", "version": 2, "fingerprint": "f", "based_on": "base"}
    (folder / "b.v2.json").write_text(json.dumps(gone), encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="madcluster.serve.kept"):
        assert kept.entries() == [good]
    assert [r.getMessage() for r in caplog.records] == [
        (
            f"skipping kept model record {folder / 'a.v1.json'}: Expecting property name "
            "enclosed in double quotes: line 1 column 2 (char 1)"
        ),
        f"skipping kept model record {folder / 'b.v1.json'}: 'fingerprint'",
        f"skipping kept model record {folder / 'b.v2.json'}: {folder / 'b.v2.mcz'} is missing",
    ]


def test_a_streams_version_never_goes_back_across_restarts(model, tmp_path):
    """A replaced file served as version 3 stays version 3 at every later restart, after the kept
    refit it replaced is deleted (it came back as version 1: a stream went 3 -> 1 with no change
    of model); a refit after that is version 4."""
    refit, deployed = _fit(1), _fit(2)
    served, state = tmp_path / "m.mcz", tmp_path / "state"
    model.save(served)
    store = StreamStore({"m": MADCluster.load(served)}, state)
    store.update("s", None, three_channels(40, 3).tolist(), None)
    store.swap_model("m", refit)
    store.stop()
    deployed.save(served)
    for _ in range(2):
        again = StreamStore({"m": MADCluster.load(served)}, state)
        assert again.versions["m"] == 3 and again.get("s").version == 3
        again.stop()
    assert [(e.version, e.fingerprint) for e in KeptModels(state).entries()] == [
        (3, fingerprint(deployed))
    ]
    last = StreamStore({"m": MADCluster.load(served)}, state)
    assert last.swap_model("m", _fit(3)) == (4, 1) and last.get("s").version == 4


def test_a_replaced_file_not_kept_is_still_served_and_the_failure_logged(
    model, tmp_path, monkeypatch, caplog
):
    kept = KeptModels(tmp_path)
    kept.keep("m", 2, _fit(2), "a former file")

    def full(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(KeptModels, "keep", full)
    with caplog.at_level(logging.WARNING, logger="madcluster.serve.kept"):
        served, versions, _ = served_models({"m": model}, kept)
    assert served["m"] is model and versions == {"m": 3}
    assert caplog.records[-1].getMessage() == (
        f"model 'm': could not keep version 3 in {kept.path} ([Errno 28] No space left on "
        "device); a later restart may number it 1"
    )
