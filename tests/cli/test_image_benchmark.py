"""``madcluster benchmark --images`` end to end on a tiny generated set: tables with the paper's rows,
figures, resume (whole and after an interruption), the settings guard, and every input error."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from madcluster.cli import main
from madcluster.images.synthetic import make_texture_defects

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "tables" / "image_table.py"
TINY = ["--epochs", "1", "--image-size", "32", "--batch-size", "4", "--embedder-param", "hidden=8",
        "--embedder-param", "blocks=1", "--quiet"]


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return make_texture_defects(tmp_path_factory.mktemp("mvtec"), seed=5, classes=("disc", "weave"), size=32,
                                n_train=5, n_test_good=2, n_test_per_defect=1)


def _rows(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines() if line.strip()]


@pytest.mark.slow
def test_image_table_runs_resumes_and_guards_its_settings(root, tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["benchmark", "--images", str(root), "--image-models", "pyramidflow", "rd4ad", "--configs", "alone", "paper",
            "--classes", "disc", "--out", str(out), *TINY]
    assert main(argv) == 0
    rows = _rows(out)
    assert [(r["model"], r["config"]) for r in rows] == [("pyramidflow", "alone"), ("pyramidflow", "paper"),
                                                        ("rd4ad", "alone"), ("rd4ad", "paper")]
    assert all(r["cls"] == "disc" and r["epochs_run"] == 1 and r["n_test"] == 6 for r in rows)
    tables = (out / "tables.md").read_text()
    assert "Command: `madcluster benchmark --images " in tables and "--classes disc" in tables
    disc = next(line for line in tables.splitlines() if line.startswith("| disc"))  # image AUROC table first
    cells = [c.strip() for c in disc.strip("|").split("|")]
    assert cells[1:3] == [f"{rows[0]['image_auroc']:.3f}", f"{rows[1]['image_auroc']:.3f}"]
    assert cells[3] == "0.810 → 0.834 (pill)"  # the paper's PyramidFlow row of the class disc imitates
    assert cells[6] == "0.936 → 0.956 (pill)"  # and RD4AD's
    assert sorted(p.name for p in (out / "figures").iterdir()) == ["disc-pyramidflow.png", "disc-rd4ad.png"]
    assert "4 run now, 0 resumed" in capsys.readouterr().out

    assert main(argv) == 0  # the same command again: nothing refitted, same table
    assert _rows(out) == rows and "0 run now, 4 resumed" in capsys.readouterr().out

    lines = (out / "runs.jsonl").read_text().splitlines()  # interrupted during the last fit
    (out / "runs.jsonl").write_text("\n".join(lines[:-1]) + "\n")
    assert main(argv) == 0
    assert "1 run now, 3 resumed" in capsys.readouterr().out
    assert _rows(out)[:3] == rows[:3] and _rows(out)[3]["image_auroc"] == rows[3]["image_auroc"]  # seeded: same

    two_epochs = [*argv, "--epochs", "2"]
    assert main(two_epochs) == 2  # other settings never mix into the same table
    assert "other settings (epochs)" in capsys.readouterr().err and len(_rows(out)) == 4
    assert main([*two_epochs, "--no-resume"]) == 0
    assert [r["epochs_run"] for r in _rows(out)] == [2, 2, 2, 2]
    assert json.loads((out / "settings.json").read_text())["epochs"] == 2


@pytest.mark.slow
def test_generated_set_is_made_once_and_the_script_wraps_the_command(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("image_table_script", SCRIPT)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    argv = ["--generated-dir", str(tmp_path / "gen"), "--image-models", "pyramidflow", "--configs", "alone",
            "--classes", "ring", "--n-train", "4", "--out", str(tmp_path / "out"), *TINY]
    assert script.main(argv) == 0  # --images generated is the script's default
    made = tmp_path / "gen" / "seed0-32px"
    assert sorted(p.name for p in made.iterdir()) == ["disc", "grain", "ring", "speckle", "weave"]
    assert "generated texture-defect set (data seed 0; NOT MVTec AD)" in (tmp_path / "out" / "tables.md").read_text()
    stamp = (made / "ring" / "train" / "good" / "000.png").stat().st_mtime_ns
    assert script.main([*argv, "--no-resume"]) == 0
    assert (made / "ring" / "train" / "good" / "000.png").stat().st_mtime_ns == stamp  # reused, not remade
    assert _rows(tmp_path / "out")[0]["n_train"] == 4


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--images", "{missing}"], "MVTec AD folder '{missing}' does not exist"),
        (["--images", "{not_mvtec}"], "no MVTec AD class folders (<class>/train/good) under"),
        (["--images", "{root}", "--image-models", "realnet"], "unknown image model 'realnet'; choose from rd4ad, pyramidflow"),
        (["--images", "{root}", "--configs", "alone", "joint"], "unknown configuration 'joint'; choose from alone, paper"),
        (["--images", "{root}", "--classes", "bottle"], "no class 'bottle' in"),
        (["--images", "{root}", "--teacher-weights", "{missing}.pth"], "teacher weights file"),
        (["--images", "{root}", "--embedder-param", "width=3"], "width apply to none of rd4ad, pyramidflow"),
        (["--images", "generated", "--dataset", "MSL", "--window-size", "10"], "--dataset, --window-size do(es) not apply"),
    ],
)
def test_errors_name_the_problem_before_any_fit(root, tmp_path, capsys, extra, message):
    not_mvtec = tmp_path / "photos"
    (not_mvtec / "cats").mkdir(parents=True)
    names = {"missing": str(tmp_path / "nowhere"), "not_mvtec": str(not_mvtec), "root": str(root)}
    argv = ["benchmark", *(a.format(**names) for a in extra), "--out", str(tmp_path / "out"), "--quiet"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("madcluster benchmark: error: ") and message.format(**names) in err
    assert "Traceback" not in err and not (tmp_path / "out").exists()
