"""Time estimate and epoch lines (madcluster.training.progress)."""

import io

from madcluster.training.progress import TrainingProgress, format_seconds


def test_format_seconds():
    assert format_seconds(4.25) == "4.2 s"
    assert format_seconds(42) == "42 s"
    assert format_seconds(185) == "3 min 05 s"
    assert format_seconds(3720) == "1 h 02 min"


def _run(stream, enabled=True):
    progress = TrainingProgress(enabled=enabled, epochs=4, batches_per_epoch=5, stream=stream)
    for epoch in (1, 2):
        progress.begin_epoch(epoch)
        for batch in range(5):
            progress.batch_done(batch)
        progress.end_epoch(epoch, {"loss": 0.5, "val": 0.25})
    progress.close()


def test_log_file_gets_plain_lines_with_estimate_and_time_left():
    stream = io.StringIO()  # not a terminal: no tqdm redraws
    _run(stream)
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue()
    assert lines[0].startswith("estimated training time: up to ") and "4 epochs x 5 batches" in lines[0]
    assert lines[1].startswith("epoch 1/4: loss 0.5000  val 0.2500  (")
    assert "elapsed" in lines[2] and "left at most" in lines[2] and len(lines) == 3


def test_disabled_is_silent():
    stream = io.StringIO()
    _run(stream, enabled=False)
    assert stream.getvalue() == ""


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_terminal_gets_bars_and_the_estimate():
    stream = _Terminal()
    _run(stream)
    text = stream.getvalue()
    assert "estimated training time" in text and "\r" in text  # tqdm's redraws
    assert "epoch 1/4:" not in text
