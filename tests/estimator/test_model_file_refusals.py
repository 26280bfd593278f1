"""Model files that must be refused, each with the error naming the file and what is wrong: a
directory, a header of another format or no JSON object, a pickled array (nothing is ever
unpickled), a file without a format version (read as format 0 and upgraded), a format 2 file
with an unknown input term, arrays that do not fit the network."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from madcluster import MADCluster
from madcluster.estimator.persistence import read_model_file, write_model_file
from madcluster.exceptions import ModelFileError

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "bb28e52" / "default.mcz"


def _archive(path: Path, header: object, arrays: dict, allow_pickle: bool = False) -> Path:
    buffer = io.BytesIO()
    np.savez(buffer, allow_pickle=allow_pickle, **arrays)
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("config.json", json.dumps(header))
        zf.writestr("arrays.npz", buffer.getvalue())
    return path


def test_a_directory_is_named(tmp_path) -> None:
    with pytest.raises(ModelFileError, match=rf"^model file '{tmp_path}' is a directory: give"):
        read_model_file(tmp_path)


@pytest.mark.parametrize("header", [{"format": "other-tool", "format_version": 1}, [1, 2]])
def test_a_header_of_another_format_is_refused(tmp_path, header: object) -> None:
    path = _archive(tmp_path / "other.mcz", header, {"x": np.zeros(2)})
    with pytest.raises(ModelFileError, match=rf"^'{path}' is not a madcluster model file$"):
        read_model_file(path)


def test_a_pickled_array_is_never_unpickled(tmp_path) -> None:
    header = {"format": "madcluster-model", "format_version": 4}
    arrays = {"x": np.array([{"a": 1}], dtype=object)}
    path = _archive(tmp_path / "pickled.mcz", header, arrays, allow_pickle=True)
    with pytest.raises(ModelFileError, match=rf"^'{path}' is not a readable madcluster model"):
        read_model_file(path)


def test_a_file_without_a_format_version_is_upgraded_from_the_first(tmp_path) -> None:
    path = _archive(tmp_path / "old.mcz", {"format": "madcluster-model"}, {"x": np.zeros(2)})
    with pytest.raises(
        ModelFileError, match=rf"^'{path}': a format 1 model file without 'params'$"
    ):
        read_model_file(path)


def test_an_unknown_input_term_in_a_format_2_file_is_named(tmp_path) -> None:
    config, arrays = read_model_file(FIXTURE)
    config = {k: v for k, v in config.items() if k not in ("format", "format_version")}
    config["params"]["input_terms"] = ["no-such-term"]
    path = tmp_path / "bad.mcz"
    write_model_file(path, config, arrays)
    with zipfile.ZipFile(path) as zf:
        header = json.loads(zf.read("config.json"))
    header["format_version"] = 2
    _rewrite_header(path, header)
    with pytest.raises(ModelFileError, match=rf"^'{path}': .*no-such-term"):
        read_model_file(path)


def _rewrite_header(path: Path, header: dict) -> None:
    with zipfile.ZipFile(path) as zf:
        arrays = zf.read("arrays.npz")
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("config.json", json.dumps(header))
        zf.writestr("arrays.npz", arrays)


def test_arrays_that_do_not_fit_the_network_are_named(tmp_path) -> None:
    config, arrays = read_model_file(FIXTURE)
    config = {k: v for k, v in config.items() if k not in ("format", "format_version")}
    config["fitted"]["n_hidden"] = config["fitted"]["n_hidden"] + 1
    path = tmp_path / "mismatch.mcz"
    write_model_file(path, config, arrays)
    with pytest.raises(
        ModelFileError, match=rf"^'{path}' does not match this madcluster version or its embedder"
    ):
        MADCluster.load(path)


def test_the_training_record_loads_as_written() -> None:
    config, _ = read_model_file(FIXTURE)
    model = MADCluster.load(FIXTURE)
    assert model.history_ == config["fitted"]["history_"]
    assert model.device_ == "cpu"


def test_a_missing_weight_is_refused_not_left_at_random(tmp_path) -> None:
    config, arrays = read_model_file(FIXTURE)
    config = {k: v for k, v in config.items() if k not in ("format", "format_version")}
    dropped = min(k for k in arrays if k.startswith("state/"))
    path = tmp_path / "missing.mcz"
    write_model_file(path, config, {k: v for k, v in arrays.items() if k != dropped})
    with pytest.raises(ModelFileError, match="does not match this madcluster version"):
        MADCluster.load(path)
