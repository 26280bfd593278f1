"""The names a server gives the models it loads: a ``.mcz`` file's name without the suffix, another
file's stem; an empty folder refused with the folder and what to do named (the mutation run's
survivors: a file not ending in ``.mcz`` and the message's words were never checked)."""

from __future__ import annotations

import pytest

from madcluster.exceptions import ModelFileError
from madcluster.serve.models import model_files


def test_a_model_is_named_after_its_file(tmp_path):
    assert model_files(tmp_path / "pump.mcz") == {"pump": tmp_path / "pump.mcz"}
    assert model_files(tmp_path / "pump.v2.model") == {"pump.v2": tmp_path / "pump.v2.model"}
    for name in ("b.mcz", "a.mcz", "notes.txt"):
        (tmp_path / name).write_bytes(b"")
    assert model_files(tmp_path) == {"a": tmp_path / "a.mcz", "b": tmp_path / "b.mcz"}


def test_a_folder_without_model_files_is_refused_naming_it(tmp_path):
    with pytest.raises(ModelFileError) as refused:
        model_files(tmp_path)
    assert str(refused.value) == (
        f"{str(tmp_path)!r} holds no .mcz model files: serve one model file, or a folder of them "
        "(`madcluster fit FOLDER -o MODELS/` writes one per entity file)"
    )
