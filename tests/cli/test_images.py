"""`madcluster fit` / `score` on an MVTec-layout class folder: a model file, a scores CSV, map PNGs."""

from __future__ import annotations

import pandas as pd
import pytest
from PIL import Image

from madcluster.cli import main
from madcluster.images.synthetic import make_texture_defects


@pytest.fixture(scope="module")
def tiny_root(tmp_path_factory):
    """Two classes (RGB disc, grayscale weave) of the generated set, 32 px, a few images each."""
    return make_texture_defects(tmp_path_factory.mktemp("textures"), seed=3, classes=("weave", "disc"), size=32,
                                n_train=6, n_test_good=2, n_test_per_defect=1)


def test_fit_then_score_a_class_folder(tiny_root, tmp_path, capsys):
    model = tmp_path / "disc.mcz"
    fit = ["fit", str(tiny_root / "disc"), "-o", str(model), "--embedder", "pyramidflow", "--image-size", "32",
           "--epochs", "1", "--layout", "pixels", "--embedder-param", "blocks=1", "--embedder-param", "hidden=8"]
    assert main(fit) == 0
    assert "on 6 images of 3 channel(s) at 32 px" in capsys.readouterr().out
    scores_csv = tmp_path / "hole.csv"
    maps = tmp_path / "maps"
    assert main(["score", str(model), str(tiny_root / "disc" / "test" / "hole"), "-o", str(scores_csv), "--maps", str(maps)]) == 0
    frame = pd.read_csv(scores_csv)
    assert list(frame.columns) == ["image", "score", "is_anomaly"] and list(frame.image) == ["000.png"]
    with Image.open(maps / "000_map.png") as img:
        assert img.size == (32, 32)
    # a grayscale folder on an RGB model: one line, exit 2
    assert main(["score", str(model), str(tiny_root / "weave" / "test" / "good"), "-o", str(tmp_path / "g.csv")]) == 2
    assert "grayscale but the model was trained on RGB" in capsys.readouterr().err


def test_time_series_flags_are_refused_for_images(tiny_root, tmp_path, capsys):
    args = ["fit", str(tiny_root / "disc"), "-o", str(tmp_path / "m.mcz"), "--embedder", "pyramidflow", "--window-size", "10"]
    assert main(args) == 2
    assert "window_size do(es) not apply to image models" in capsys.readouterr().err


def test_the_paper_reading_from_the_command_line(tiny_root, tmp_path):
    """--layout channels --head-weight 1: the paper's literal reading; without them the image defaults."""
    from madcluster.images.detector import ImageMADCluster

    common = [str(tiny_root / "disc"), "--embedder", "pyramidflow", "--image-size", "32", "--epochs", "1",
              "--embedder-param", "blocks=1", "--embedder-param", "hidden=8", "--quiet"]
    assert main(["fit", *common, "-o", str(tmp_path / "paper.mcz"), "--layout", "channels", "--head-weight", "1"]) == 0
    assert main(["fit", *common, "-o", str(tmp_path / "default.mcz")]) == 0
    paper, default = (ImageMADCluster.load(tmp_path / name).get_params() for name in ("paper.mcz", "default.mcz"))
    assert (paper["layout"], paper["head_weight"]) == ("channels", 1.0)
    assert (default["layout"], default["head_weight"]) == ("pixels", 0.5)


def test_threads_1_is_accepted_and_the_scores_csv_stays_out_of_the_dataset(tiny_root, tmp_path, monkeypatch):
    common = [str(tiny_root / "disc"), "--embedder", "pyramidflow", "--image-size", "32", "--epochs", "1",
              "--embedder-param", "blocks=1", "--embedder-param", "hidden=8", "--quiet"]
    assert main(["fit", *common, "-o", str(tmp_path / "m.mcz"), "--threads", "1"]) == 0
    before = sorted(p for p in tiny_root.rglob("*"))
    monkeypatch.chdir(tmp_path)
    assert main(["score", str(tmp_path / "m.mcz"), str(tiny_root / "disc" / "test" / "hole"), "--threads", "1"]) == 0
    assert sorted(p for p in tiny_root.rglob("*")) == before, "nothing written into the dataset tree"
    assert (tmp_path / "disc-test-hole.scores.csv").is_file()


def test_rd4ad_without_teacher_weights_warns_at_fit_and_score(tiny_root, tmp_path, capsys):
    model = tmp_path / "rd.mcz"
    fit = ["fit", str(tiny_root / "disc"), "-o", str(model), "--embedder", "rd4ad", "--image-size", "32",
           "--epochs", "1", "--embedder-param", "backbone=resnet18", "--quiet"]
    assert main(fit) == 0
    assert "randomly initialised teacher" in capsys.readouterr().err
    assert main(["score", str(model), str(tiny_root / "disc" / "test" / "hole"), "-o", str(tmp_path / "s.csv")]) == 0
    assert "randomly initialised teacher" in capsys.readouterr().err


def test_the_cli_knows_the_image_kind():
    from madcluster.cli.images import IMAGE_KIND
    from madcluster.images.detector import KIND

    assert IMAGE_KIND == KIND
