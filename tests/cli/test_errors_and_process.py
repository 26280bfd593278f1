"""The command line on what a new user runs into: errors, exit status, pipes, files.

Behaviour that is about the process (exit status, broken pipe, file modes, what reaches a
redirected stderr) runs the real entry point in a subprocess; the rest calls ``main`` in-process.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from series_helpers import make_series

from madcluster.cli import build_parser, main
from madcluster.estimator.detector import MADCluster

FAST = [
    "--window-size", "20", "--epochs", "2", "--stride", "4", "--hidden-size", "8",
    "--layers", "1", "--threads", "1",
]  # fmt: skip


def _entry_point() -> list[str]:
    """The installed ``madcluster`` script next to this Python, else ``python -m madcluster``."""
    script = Path(sys.executable).with_name("madcluster")
    if script.exists() or shutil.which("madcluster"):
        return [str(script if script.exists() else shutil.which("madcluster"))]
    return [sys.executable, "-m", "madcluster"]


def run_cli(*args: str, cwd: Path, **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "error::RuntimeWarning"}
    return subprocess.run(
        [*_entry_point(), *args], check=False, cwd=cwd, env=env, capture_output=True, text=True,
        timeout=300, **kwargs,
    )  # fmt: skip


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    """train.csv / test.csv with a timestamp column, and a model fitted on train.csv."""
    root = tmp_path_factory.mktemp("cli11")
    train = pd.DataFrame(make_series(400, 3), columns=["a", "b", "c"])
    train.insert(0, "timestamp", pd.date_range("2024-01-01", periods=400, freq="min").astype(str))
    test = pd.DataFrame(make_series(200, 3, seed=2), columns=["a", "b", "c"])
    test.insert(0, "timestamp", pd.date_range("2024-02-01", periods=200, freq="min").astype(str))
    test.loc[100:110, "b"] += 5
    test["label"] = 0
    test.loc[100:110, "label"] = 1
    train.to_csv(root / "train.csv", index=False)
    test.to_csv(root / "test.csv", index=False)
    assert (
        main(["fit", str(root / "train.csv"), "-o", str(root / "model.mcz"), "--quiet", *FAST]) == 0
    )
    return root


def _score(files: Path, data: Path, *extra: str) -> int:
    out = files / f"{data.stem}.out.csv"
    return main(["score", str(files / "model.mcz"), str(data), "-o", str(out), "--plot", "none",
                 *extra])  # fmt: skip


# ------------------------------------------------------------------ crashes -> one line, status 2
@pytest.mark.slow
@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a torch without usable CUDA")
def test_device_cuda_without_cuda_is_one_line_status_2(files):
    for args in (
        ["fit", "train.csv", "-o", "m.mcz", "--device", "cuda", *FAST],
        ["score", "model.mcz", "test.csv", "--label-column", "label", "--device", "cuda"],
    ):
        proc = run_cli(*args, cwd=files)
        assert proc.returncode == 2, proc.stderr
        assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
        assert "'cuda' is not available" in proc.stderr and "use cpu" in proc.stderr
    assert not (files / "m.mcz").exists() and not (files / "test.scores.csv").exists()


@pytest.mark.parametrize("value", ["-3", "0", "two"])
def test_threads_must_be_a_positive_integer(files, value, capsys):
    with pytest.raises(SystemExit) as info:
        main(["fit", str(files / "train.csv"), "-o", str(files / "t.mcz"), "--threads", value])
    assert info.value.code == 2
    assert "--threads" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["score", str(files / "model.mcz"), str(files / "test.csv"), "--threads", value])


def test_output_directory_is_refused_before_training(files, capsys):
    (files / "models").mkdir(exist_ok=True)
    for target in (files / "models", str(files / "models") + "/", files / "train.csv"):
        assert main(["fit", str(files / "train.csv"), "-o", str(target), *FAST]) == 2
        out, err = capsys.readouterr()
        assert "features" not in out and "trained" not in out  # refused before reading / training
        assert "model file" in err and ".tmp" not in err
    assert list((files / "models").iterdir()) == []


def test_unwritable_output_folder_is_refused_before_training(files, capsys, monkeypatch):
    monkeypatch.setattr(os, "access", lambda *args, **kwargs: False)
    assert main(["fit", str(files / "train.csv"), "-o", str(files / "ro" / "m.mcz"), *FAST]) == 2
    out, err = capsys.readouterr()
    assert "trained" not in out and "is not writable" in err and ".tmp" not in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write into read-only folders")
def test_read_only_folder_for_real(files, capsys):  # pragma: no cover - CI runs as root
    ro = files / "readonly"
    ro.mkdir(exist_ok=True)
    ro.chmod(0o555)
    try:
        assert main(["fit", str(files / "train.csv"), "-o", str(ro / "m.mcz"), *FAST]) == 2
        assert "not writable" in capsys.readouterr().err
    finally:
        ro.chmod(0o755)


@pytest.mark.slow
def test_broken_pipe_on_stdout_is_quiet_and_the_work_finishes(files):
    """`madcluster score ... | head -2`: no traceback, scores and plot still written."""
    proc = subprocess.Popen(
        [*_entry_point(), "score", "model.mcz", "test.csv", "--label-column", "label",
         "-o", "piped.csv"],
        cwd=files, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )  # fmt: skip
    first = [proc.stdout.readline(), proc.stdout.readline()]
    proc.stdout.close()  # what `head -2` does after two lines
    err = proc.stderr.read()
    assert proc.wait(timeout=300) == 0, err
    assert first[0].startswith("scored 200 rows")
    assert "Traceback" not in err and "BrokenPipe" not in err and "Exception ignored" not in err
    assert (files / "piped.csv").exists() and (files / "piped.png").exists()


@pytest.mark.slow
def test_redirected_run_has_epoch_lines_no_bars_and_normal_file_modes(files):
    proc = run_cli(
        "fit", "train.csv", "-o", "sub/model.mcz", "--history-plot", "sub/curves.png", *FAST,
        cwd=files, preexec_fn=lambda: os.umask(0o022),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "epoch 1/2:" in proc.stderr and "epoch 2/2:" in proc.stderr and "left at most" in proc.stderr
    assert "estimated training time: up to" in proc.stderr
    assert "\r" not in proc.stderr and "\x1b[" not in proc.stderr and "it/s" not in proc.stderr
    proc = run_cli(
        "score", "sub/model.mcz", "test.csv", "--label-column", "label", "-o", "sub/s.csv",
        cwd=files, preexec_fn=lambda: os.umask(0o022),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    for name in ("model.mcz", "curves.png", "s.csv", "s.png"):
        assert stat.S_IMODE((files / "sub" / name).stat().st_mode) == 0o644, name


# -------------------------------------------------------------------------- accepted silently
def test_fit_prints_columns_used_and_dropped_and_stores_names(files, capsys):
    out, _ = capsys.readouterr()
    assert main(["fit", str(files / "test.csv"), "-o", str(files / "lab.mcz"), "--quiet",
                 "--label-column", "label", *FAST]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "features (3): a, b, c" in out
    assert "not used as features: label (labels), timestamp (timestamp)" in out
    assert list(MADCluster.load(files / "model.mcz").feature_names_in_) == ["a", "b", "c"]


def test_fit_notes_a_label_column_used_as_a_feature(files, capsys):
    assert main(["fit", str(files / "test.csv"), "-o", str(files / "lab2.mcz"), *FAST]) == 0
    err = capsys.readouterr().err
    assert "column named 'label'" in err and "--label-column label" in err


def test_scores_csv_keeps_the_timestamp_column(files):
    assert _score(files, files / "test.csv", "--label-column", "label") == 0
    scores = pd.read_csv(files / "test.out.csv")
    assert list(scores.columns) == ["row", "timestamp", "score", "is_anomaly", "top_channels", "label"]
    test = pd.read_csv(files / "test.csv")
    assert list(scores["timestamp"]) == list(test["timestamp"])


def test_reordered_columns_are_matched_by_name(files, capsys):
    assert _score(files, files / "test.csv", "--label-column", "label") == 0
    reference = pd.read_csv(files / "test.out.csv")["score"]
    test = pd.read_csv(files / "test.csv")
    test[["label", "c", "timestamp", "b", "a"]].to_csv(files / "shuffled.csv", index=False)
    capsys.readouterr()
    assert _score(files, files / "shuffled.csv", "--label-column", "label") == 0
    np.testing.assert_allclose(pd.read_csv(files / "shuffled.out.csv")["score"], reference)
    assert "matched by name" in capsys.readouterr().err
    assert _score(files, files / "shuffled.csv", "--label-column", "label", "--quiet") == 0
    assert "matched by name" not in capsys.readouterr().err


def test_renamed_columns_are_refused_naming_them(files, capsys):
    test = pd.read_csv(files / "test.csv").rename(columns={"c": "temperature"})
    test.to_csv(files / "renamed.csv", index=False)
    assert _score(files, files / "renamed.csv", "--label-column", "label") == 2
    err = capsys.readouterr().err
    assert "missing 'c'" in err and "'temperature'" in err and "renamed" in err
    assert not (files / "renamed.out.csv").exists()


def test_forgotten_label_column_names_it_and_the_option(files, capsys):
    assert _score(files, files / "test.csv") == 2
    err = capsys.readouterr().err
    assert "'label'" in err and "--label-column label" in err
    # a model without column names (trained on .npy): the feature count is off by one
    np.save(files / "train.npy", pd.read_csv(files / "train.csv")[["a", "b", "c"]].to_numpy())
    assert (
        main(["fit", str(files / "train.npy"), "-o", str(files / "npy.mcz"), "--quiet", *FAST]) == 0
    )
    capsys.readouterr()
    assert main(["score", str(files / "npy.mcz"), str(files / "test.csv"), "--plot", "none",
                 "-o", str(files / "n.csv")]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert "has 4 feature columns but the model was trained on 3" in err
    assert "--label-column label" in err


def test_csv_without_header_loses_no_row(files, capsys):
    values = pd.read_csv(files / "test.csv")[["a", "b", "c"]].to_numpy()
    np.savetxt(files / "nohead.csv", values, delimiter=",")
    assert _score(files, files / "nohead.csv") == 0
    out, err = capsys.readouterr()
    assert "scored 200 rows" in out and len(pd.read_csv(files / "nohead.out.csv")) == 200
    assert "taken by position" in err
    assert _score(files, files / "nohead.csv", "--header") == 2  # first row as names: no match
    assert _score(files, files / "nohead.csv", "--no-header") == 0


def test_huge_values_are_too_large_to_scale(files, capsys):
    test = pd.read_csv(files / "test.csv")
    test.loc[7, "a"] = 1e300
    test.to_csv(files / "huge.csv", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _score(files, files / "huge.csv", "--label-column", "label") == 2
    err = capsys.readouterr().err
    assert "too large to scale" in err and "NaN" not in err


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "high"])
def test_bad_threshold_is_refused_before_writing(files, value, capsys):
    target = files / f"thr{value}.csv"
    with pytest.raises(SystemExit) as info:
        main(["score", str(files / "model.mcz"), str(files / "test.csv"), "--label-column",
              "label", "-o", str(target), "--threshold", value])  # fmt: skip
    assert info.value.code == 2 and "--threshold" in capsys.readouterr().err
    assert not target.exists() and not target.with_suffix(".png").exists()


def test_score_checks_its_outputs_before_scoring(files, capsys):
    args = ["score", str(files / "model.mcz"), str(files / "test.csv"), "--label-column", "label"]
    assert main([*args, "-o", str(files / "test.csv")]) == 2
    assert "input file" in capsys.readouterr().err
    assert main([*args, "-o", str(files / "x.csv"), "--plot", str(files)]) == 2
    assert "is a directory" in capsys.readouterr().err
    assert not (files / "x.csv").exists()


# ------------------------------------------------------------------------------ conveniences
def test_validation_size_option(files, capsys):
    model = files / "noval.mcz"
    assert main(["fit", str(files / "train.csv"), "-o", str(model), "--quiet",
                 "--validation-size", "0", *FAST]) == 0  # fmt: skip
    assert MADCluster.load(model).get_params()["validation_size"] == 0
    with pytest.raises(SystemExit):
        main(["fit", str(files / "train.csv"), "-o", str(model), "--validation-size", "1"])


def test_help_texts():
    parser = build_parser()
    sub = parser._subparsers._group_actions[0].choices  # argparse has no public API for it
    fit_help, score_help = sub["fit"].format_help(), sub["score"].format_help()
    assert "20%%" not in fit_help and "20%" in fit_help
    for option in ("--validation-size", "--no-header", "--header", "--threads", "--quiet"):
        assert option in fit_help and option in score_help or option == "--validation-size"
    assert "--validation-size" in fit_help and "one line per epoch" in fit_help
    assert "timestamp" in score_help


def test_demo_output_dir_that_is_a_file_is_refused_at_once(files, capsys):
    assert main(["demo", "--output-dir", str(files / "train.csv"), "--quiet"]) == 2
    out, err = capsys.readouterr()
    assert "is a file, not a folder" in err and "demo data" not in out


@pytest.mark.parametrize("value", ["0.5", "-0.1", "nan"])
def test_contamination_is_checked_before_training(files, value, capsys):
    with pytest.raises(SystemExit) as info:
        main(
            ["fit", str(files / "train.csv"), "-o", str(files / "c.mcz"), "--contamination", value]
        )
    assert info.value.code == 2 and "--contamination" in capsys.readouterr().err


def test_fit_base_only_reports_what_the_model_records(files, capsys):
    """A base model alone has no nu or R: fit prints the losses it has instead of a KeyError."""
    out = files / "alone.mcz"
    code = main(["fit", str(files / "train.csv"), "-o", str(out), "--embedder", "deepsvdd",
                 "--mode", "base-only", *FAST])
    assert code == 0 and out.is_file()
    final = [line for line in capsys.readouterr().out.splitlines() if line.startswith("final ")]
    assert final and "train loss=" in final[0] and "nu=" not in final[0]
