"""`madcluster score --figures DIR`: the paper's figures for a model file, from the command line."""

from __future__ import annotations

import matplotlib.image as mpimg
import pandas as pd
import pytest

from madcluster.cli import main


@pytest.mark.slow
def test_score_writes_the_embedding_and_sigma_band_figures(full_model, data, tmp_path, capsys):
    _, test, labels = data
    frame = pd.DataFrame(test, columns=["a", "b", "c"])
    frame.insert(0, "time", pd.date_range("2024-01-01", periods=len(test), freq="min").astype(str))
    frame["label"] = labels
    frame.to_csv(tmp_path / "test.csv", index=False)
    model = tmp_path / "m.mcz"
    full_model.save(model)  # fitted on an array: the CSV's columns are taken by position
    figures = tmp_path / "figs"
    assert main(["score", str(model), str(tmp_path / "test.csv"), "-o", str(tmp_path / "s.csv"),
                 "--label-column", "label", "--figures", str(figures), "--quiet"]) == 0
    for name in ("embedding.png", "distance_bands.png"):
        image = mpimg.imread(figures / name)
        assert image.shape[0] > 200 and image[..., :3].std() > 0
    assert mpimg.imread(tmp_path / "s.png").shape[0] > 200  # the score plot, with the input channels
    assert "figures written to" in capsys.readouterr().out


def test_score_checks_the_figures_folder_before_any_work(full_model, data, tmp_path, capsys):
    full_model.save(tmp_path / "m.mcz")
    pd.DataFrame(data[1]).to_csv(tmp_path / "test.csv", index=False)
    (tmp_path / "taken").write_text("a file, not a folder")
    assert main(["score", str(tmp_path / "m.mcz"), str(tmp_path / "test.csv"),
                 "-o", str(tmp_path / "s.csv"), "--figures", str(tmp_path / "taken")]) == 2
    assert not (tmp_path / "s.csv").exists()
