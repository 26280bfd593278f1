"""A detected timestamp column is checked for time order."""

import logging

import numpy as np
import pytest

from madcluster.data.io import read_table
from madcluster.exceptions import DataError


def _csv(tmp_path, stamps, name="timestamp"):
    lines = [f"{name},a,label"] + [f"{s},{i},{i % 2}" for i, s in enumerate(stamps)]
    path = tmp_path / "x.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


MINUTES = [f"2024-01-01 00:{m:02d}" for m in range(6)]


def test_shuffled_rows_are_an_error_naming_the_rows(tmp_path):
    path = _csv(tmp_path, [MINUTES[i] for i in (0, 1, 3, 2, 4, 5)])
    with pytest.raises(DataError, match=r"not in time order: row 3 .* row 2 .*--sort-by-time"):
        read_table(path)


def test_sort_by_time_sorts_features_labels_and_timestamps(tmp_path):
    path = _csv(tmp_path, [MINUTES[i] for i in (0, 1, 3, 2, 4, 5)])
    table = read_table(path, label_column="label", sort_by_time=True)
    np.testing.assert_array_equal(table.values[:, 0], [0, 1, 3, 2, 4, 5])
    np.testing.assert_array_equal(table.labels, [0, 1, 1, 0, 0, 1])
    assert list(table.timestamps) == MINUTES


def test_numeric_time_column_is_checked_too(tmp_path):
    with pytest.raises(DataError, match="not in time order"):
        read_table(_csv(tmp_path, [0, 1, 2, 5, 4, 6], name="time_s"))


def test_duplicated_and_irregular_timestamps_warn_with_rows(tmp_path, caplog):
    stamps = [MINUTES[0], MINUTES[1], MINUTES[1], MINUTES[2], MINUTES[5]]
    with caplog.at_level(logging.WARNING):
        read_table(_csv(tmp_path, stamps))
    assert "repeat the timestamp" in caplog.text and "rows 1 and 2" in caplog.text
    assert "irregular timestamps" in caplog.text and "before rows 4" in caplog.text


def test_regular_sorted_file_says_nothing(tmp_path, caplog):
    with caplog.at_level(logging.WARNING):
        read_table(_csv(tmp_path, MINUTES))
    assert caplog.text == ""


def test_sort_without_timestamp_column_is_an_error(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("a,b\n1,2\n3,4\n")
    with pytest.raises(DataError, match="no timestamp column"):
        read_table(path, sort_by_time=True)
