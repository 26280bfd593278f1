"""Model files: format 3, format 1 files (kept in ``tests/fixtures/format1``) upgraded on reading
through the one upgrade chain and scoring as they did, and the one archive layout model
files and stream state files share."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from madcluster import MADCluster, ModelFileError
from madcluster.estimator.persistence import (
    FORMAT_VERSION,
    read_model_file,
    upgrade_format_1,
    upgrade_format_3,
)
from madcluster.exceptions import StreamError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "format1"
EXPECTED = dict(np.load(FIXTURES / "expected.npz"))


@pytest.mark.parametrize("name", ["default", "streaming"])
def test_format_1_files_load_and_score_as_they_did(name, tmp_path):
    assert read_model_file(FIXTURES / f"{name}.mcz")[0]["format_version"] == 4  # upgraded on reading
    with zipfile.ZipFile(FIXTURES / f"{name}.mcz") as zf:
        assert json.loads(zf.read("config.json"))["format_version"] == 1
    model = MADCluster.load(FIXTURES / f"{name}.mcz")
    scores = model.decision_function(EXPECTED["test"])
    np.testing.assert_allclose(scores, EXPECTED[f"{name}_scores"], rtol=1e-4, atol=1e-4)
    assert model.threshold_ == pytest.approx(float(EXPECTED[f"{name}_threshold"]), rel=1e-12)
    model.save(tmp_path / "again.mcz")  # written again: format 4, same scores
    config, _ = read_model_file(tmp_path / "again.mcz")
    assert config["format_version"] == FORMAT_VERSION == 4
    assert np.array_equal(MADCluster.load(tmp_path / "again.mcz").decision_function(EXPECTED["test"]), scores)


def test_a_streaming_format_1_file_still_streams():
    model = MADCluster.load(FIXTURES / "streaming.mcz")
    scorer = model.stream()
    streamed = np.concatenate([scorer.update(c).scores for c in np.array_split(EXPECTED["test"], 4)])
    np.testing.assert_allclose(streamed, EXPECTED["streaming_scores"], rtol=1e-4, atol=1e-4)


def test_upgrade_fills_in_what_absence_meant():
    config = {"format": "madcluster-model", "format_version": 1,
              "params": {"embedder": "drnn"}, "fitted": {"score_stats_": {}}}
    upgrade_format_1(config, {})
    assert config["format_version"] == 2
    assert config["params"] == {"embedder": "drnn", "roughness_window": 0, "input_terms": None,
                                "part_weights": {"own": 1.0, "kmeans": 1.0, "ar": 1.0}}  # before weights: equal
    assert config["fitted"]["feature_names_in_"] is None and config["fitted"]["constant_columns_"] == []
    assert config["fitted"]["part_weights_"] == {}


def _rewrite(path: Path, out: Path, **changes) -> None:
    with zipfile.ZipFile(path) as zf:
        header, arrays = json.loads(zf.read("config.json")), zf.read("arrays.npz")
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("config.json", json.dumps({**header, **changes}))
        zf.writestr("arrays.npz", arrays)


def test_newer_and_foreign_files_are_refused(tmp_path):
    _rewrite(FIXTURES / "default.mcz", tmp_path / "newer.mcz", format_version=FORMAT_VERSION + 1)
    with pytest.raises(ModelFileError, match="written by a newer madcluster"):
        MADCluster.load(tmp_path / "newer.mcz")
    (tmp_path / "junk.mcz").write_bytes(b"not a zip")
    with pytest.raises(ModelFileError, match="not a readable madcluster model file"):
        MADCluster.load(tmp_path / "junk.mcz")


def test_model_files_and_stream_state_share_one_archive_layout(tmp_path):
    model = MADCluster.load(FIXTURES / "streaming.mcz")
    scorer = model.stream()
    scorer.update(EXPECTED["test"][:50])
    scorer.save(tmp_path / "s.mcs")
    with zipfile.ZipFile(tmp_path / "s.mcs") as zf:
        header = json.loads(zf.read("stream.json"))
        arrays = np.load(io.BytesIO(zf.read("buffer.npz")))
        assert header["format"] == "madcluster-stream" and "buffer" in arrays.files
    restored = type(scorer).restore(model.model_, tmp_path / "s.mcs")
    assert restored.steps_seen == 50
    (tmp_path / "bad.mcs").write_bytes(b"junk")
    with pytest.raises(StreamError, match="not a readable stream state file"):
        type(scorer).restore(model.model_, tmp_path / "bad.mcs")


def test_a_format_3_default_drnn_file_keeps_its_64_units(tmp_path):
    """Until format 4 the D-RNN's default was 64 units: a file that left the size to the default
    loads with 64 (its weights' size) and scores as before, not with today's 32."""
    rng = np.random.default_rng(0)
    x = np.sin(np.arange(400)[:, None] / np.array([4.0, 9.0])) + 0.1 * rng.standard_normal((400, 2))
    model = MADCluster(window_size=20, epochs=1, embedder_params={"hidden_size": 64, "n_layers": 2},
                       random_state=0).fit(x[:300])
    model.save(tmp_path / "new.mcz")
    with zipfile.ZipFile(tmp_path / "new.mcz") as zf:
        header, arrays = json.loads(zf.read("config.json")), zf.read("arrays.npz")
    header["format_version"] = 3
    header["params"]["embedder_params"] = {"n_layers": 2}  # the size left to the default
    with zipfile.ZipFile(tmp_path / "old.mcz", "w") as zf:
        zf.writestr("config.json", json.dumps(header))
        zf.writestr("arrays.npz", arrays)
    old = MADCluster.load(tmp_path / "old.mcz")
    assert old.embedder_params == {"n_layers": 2, "hidden_size": 64}
    assert old.model_.net.embedder.out_features == 64
    np.testing.assert_array_equal(old.decision_function(x[300:]), model.decision_function(x[300:]))


def test_format_3_upgrade_touches_only_drnn_files_without_a_size():
    def upgraded(params):
        config = {"format_version": 3, "params": params, "fitted": {}}
        upgrade_format_3(config, {})
        assert config["format_version"] == 4
        return config["params"]

    assert upgraded({"embedder": "drnn", "embedder_params": None})["embedder_params"] == {"hidden_size": 64}
    assert upgraded({"embedder": "drnn", "embedder_params": {"hidden_size": 16}})["embedder_params"] == {"hidden_size": 16}
    assert upgraded({"embedder": "thoc", "embedder_params": {}})["embedder_params"] == {}
