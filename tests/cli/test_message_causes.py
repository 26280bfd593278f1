"""Messages that name the real cause: an image folder without --embedder, a diverged training."""

from __future__ import annotations

import pandas as pd
import pytest
from series_helpers import make_series

from madcluster.cli import main
from madcluster.estimator import fitting
from madcluster.exceptions import DataError
from madcluster.images.synthetic import make_texture_defects

FAST = ["--window-size", "20", "--epochs", "1", "--stride", "4", "--hidden-size", "16", "--layers", "2", "--quiet"]


def test_fit_on_an_image_folder_without_embedder_says_to_pass_one(tmp_path, capsys):
    root = make_texture_defects(tmp_path / "set", seed=1, classes=("disc",), size=32, n_train=3, n_test_good=1,
                                n_test_per_defect=1)
    for folder in (root / "disc", root / "disc" / "train" / "good"):
        assert main(["fit", str(folder), "-o", str(tmp_path / "out"), "--quiet"]) == 2
        err = capsys.readouterr().err
        assert "holds images, not series files" in err and "--embedder rd4ad" in err
        assert "no series files" not in err


def test_a_diverged_training_is_blamed_not_the_input(tmp_path, monkeypatch, capsys):
    pd.DataFrame(make_series(300, 3), columns=["a", "b", "c"]).to_csv(tmp_path / "train.csv", index=False)

    def diverge(*args, **kwargs):
        raise DataError("the model produced non-finite scores: the input may be far outside the training range")

    monkeypatch.setattr(fitting, "fit_model", diverge)
    assert main(["fit", str(tmp_path / "train.csv"), "-o", str(tmp_path / "m.mcz"), *FAST, "--lr", "0.9"]) == 2
    err = capsys.readouterr().err
    assert "training diverged" in err and "learning rate 0.9" in err and "input may be" not in err
    assert not (tmp_path / "m.mcz").exists()


@pytest.mark.parametrize("flag", ["--seed", "--lr", "--image-size", "--port"])
def test_range_errors_do_not_start_work(flag, capsys):
    argv = ["serve", "m.mcz", flag, "-5"] if flag == "--port" else ["fit", "x.csv", "-o", "m.mcz", flag, "-5"]
    with pytest.raises(SystemExit):
        main(argv)
    assert flag in capsys.readouterr().err


def test_report_of_an_empty_folder_fails_and_writes_nothing(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["report", str(tmp_path / "empty")]) == 2
    assert "holds no result files" in capsys.readouterr().err
    assert list((tmp_path / "empty").iterdir()) == []


def test_report_notes_name_no_issue_and_no_wrong_place(tmp_path, capsys):
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "other.json").write_text("{}")
    from madcluster.reporting.content import build_content

    notes = " ".join(build_content(tmp_path / "r").notes)
    assert "issue" not in notes and "above" not in notes
    assert main(["report", str(tmp_path / "r")]) == 2
    assert "no benchmark results" in capsys.readouterr().err
