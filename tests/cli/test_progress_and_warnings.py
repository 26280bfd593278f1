"""Issue 37 item 12: long runs write plain lines, not tqdm frames, into a pipe or a file; on
constant training data scikit-learn's raw ConvergenceWarning no longer follows our own message."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

from madcluster.cli import main
from madcluster.parallel.jobs import Progress
from madcluster.training.progress import TaskLines, task_bar


def test_task_progress_in_a_file_is_plain_lines():
    stream = io.StringIO()
    bar = task_bar(total=3, desc="tasks", stream=stream)
    assert isinstance(bar, TaskLines)
    bar.every = 0.0
    for _ in range(3):
        bar.set_postfix({"done": 1, "failed": 0})
        bar.update()
    bar.close()
    text = stream.getvalue()
    assert "\r" not in text and "\x1b" not in text
    assert text.splitlines()[-1].startswith("tasks: 3/3 tasks done=1 failed=0")


def test_the_benchmark_and_fleet_progress_uses_lines_off_a_terminal(capsys):
    progress = Progress(2, desc="entities")
    progress.start(1)
    progress.finish(True, 0)
    progress.finish(True, 0)
    progress.close()
    err = capsys.readouterr().err
    assert "\r" not in err and "entities: 2/2 tasks" in err


@pytest.mark.slow
def test_constant_training_data_gives_our_message_only(tmp_path, capsys):
    path = tmp_path / "const.csv"
    np.savetxt(path, np.ones((400, 2)), delimiter=",", header="a,b", comments="")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        status = main(["fit", str(path), "-o", str(tmp_path / "c.mcz"), "--epochs", "1", "--window-size", "20",
                       "--hidden-size", "8", "--quiet"])
    assert status == 0
    assert not [w for w in caught if "distinct clusters" in str(w.message)]
    assert "ConvergenceWarning" not in capsys.readouterr().err
