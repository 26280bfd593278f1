"""CSV files as European, Excel and Windows tools write them, and duplicated names."""

import logging

import numpy as np
import pytest

from madcluster.data.io import read_table
from madcluster.exceptions import DataError


def _write(path, text, encoding="utf-8"):
    path.write_bytes(text.encode(encoding))
    return path


def test_semicolon_and_decimal_comma_are_detected(tmp_path):
    path = _write(
        tmp_path / "x.csv",
        "timestamp;a;b;c\n2024-01-01 00:00;1,5;2;3\n2024-01-01 00:01;-2,25;2;4\n",
    )
    table = read_table(path)
    assert table.columns == ["a", "b", "c"]
    np.testing.assert_allclose(table.values[:, 0], [1.5, -2.25])
    assert table.timestamp_column == "timestamp"


@pytest.mark.parametrize("sep", ["\t", "|"])
def test_tab_and_pipe_separators(tmp_path, sep):
    path = _write(tmp_path / "x.csv", f"a{sep}b\n1.5{sep}2\n3{sep}4\n")
    assert read_table(path).columns == ["a", "b"]


def test_explicit_sep_and_decimal_win(tmp_path):
    path = _write(tmp_path / "x.csv", "a;b\n1,5;2\n3;4\n")
    table = read_table(path, sep=";", decimal=",")
    np.testing.assert_allclose(table.values[:, 0], [1.5, 3.0])
    with pytest.raises(DataError, match="both ','"):
        read_table(path, sep=",", decimal=",")


def test_unsplittable_file_names_the_separator_it_looks_like(tmp_path):
    # lines with different numbers of ';' fields: no separator fits, the message says which it looks like
    path = _write(tmp_path / "x.csv", "timestamp;a;b;c\n1;2;3;4\n5;6;7\n")
    with pytest.raises(DataError, match=r"joined by ';'.*--sep"):
        read_table(path)


def test_latin1_file_reads_with_a_warning_or_the_given_encoding(tmp_path, caplog):
    path = _write(tmp_path / "x.csv", "température,b\n1,2\n3,4\n", encoding="latin-1")
    with caplog.at_level(logging.WARNING):
        table = read_table(path)
    assert table.columns == ["température", "b"]
    assert "not UTF-8" in caplog.text and "--encoding" in caplog.text
    assert read_table(path, encoding="latin-1").columns == ["température", "b"]
    with pytest.raises(DataError, match="not valid utf-8.*--encoding"):
        read_table(path, encoding="utf-8")


def test_duplicated_column_names_are_refused_by_name(tmp_path):
    path = _write(tmp_path / "x.csv", "a,b,a\n1,2,3\n4,5,6\n")
    with pytest.raises(DataError, match=r"duplicated column name\(s\) \['a'\]"):
        read_table(path)


def test_headerless_decimal_comma_rows_are_data(tmp_path):
    path = _write(tmp_path / "x.csv", "1,5;2\n3,5;4\n")
    table = read_table(path)
    assert len(table) == 2 and not table.has_header
