import logging

import numpy as np
import pandas as pd
import pytest

from madcluster.data.io import Table, as_labels, file_format, read_table
from madcluster.exceptions import DataError, DatasetNotFoundError, MADClusterError


@pytest.fixture
def frame():
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "timestamp": pd.date_range("2024-01-01", periods=20, freq="min").astype(str),
            "a": rng.normal(size=20),
            "b": rng.integers(0, 5, size=20),
            "label": [0] * 15 + [1] * 5,
        }
    )


def test_csv_roundtrip_drops_timestamp_and_logs(tmp_path, frame, caplog):
    path = tmp_path / "x.csv"
    frame.to_csv(path, index=False)
    with caplog.at_level(logging.INFO, logger="madcluster.data.io"):
        table = read_table(path, label_column="label")
    assert isinstance(table, Table)
    assert table.columns == ["a", "b"]
    assert table.values.dtype == np.float32 and table.values.shape == (20, 2)
    np.testing.assert_allclose(table.values[:, 0], frame["a"].to_numpy(), rtol=1e-6)
    assert table.labels.dtype == np.uint8 and table.labels.sum() == 5
    assert len(table) == 20
    assert "timestamp" in caplog.text


def test_unnamed_datetime_text_column_is_dropped(tmp_path, frame):
    path = tmp_path / "x.csv"
    frame.rename(columns={"timestamp": "when"}).to_csv(path, index=False)
    table = read_table(path, label_column="label")
    assert table.columns == ["a", "b"]


def test_numeric_column_named_like_time_is_dropped(tmp_path):
    path = tmp_path / "psm_like.csv"
    pd.DataFrame({"timestamp_(min)": [0.0, 1.0, 2.0], "f0": [1.0, 2.0, 3.0]}).to_csv(
        path, index=False
    )
    table = read_table(path)
    assert table.columns == ["f0"]
    assert table.labels is None


def test_other_text_column_is_an_error_naming_it(tmp_path, frame):
    frame["host"] = ["alpha", "beta"] * 10
    path = tmp_path / "x.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(DataError, match="host"):
        read_table(path, label_column="label")
    # ... unless dropped explicitly
    table = read_table(path, label_column="label", drop_columns=["host"])
    assert table.columns == ["a", "b"]


def test_columns_selects_features_in_order(tmp_path, frame):
    path = tmp_path / "x.csv"
    frame.to_csv(path, index=False)
    table = read_table(path, columns=["b", "a"])
    assert table.columns == ["b", "a"]
    assert table.labels is None


def test_parquet(tmp_path, frame):
    pytest.importorskip("pyarrow")
    path = tmp_path / "x.parquet"
    frame.assign(timestamp=pd.to_datetime(frame["timestamp"])).to_parquet(path)
    table = read_table(path, label_column="label")
    assert table.columns == ["a", "b"]
    assert table.labels.tolist() == frame["label"].tolist()


def test_npy_with_integer_label_column(tmp_path):
    arr = np.zeros((10, 4))
    arr[:, 0] = np.arange(10)
    arr[7:, 3] = 1
    path = tmp_path / "x.npy"
    np.save(path, arr)
    table = read_table(path, label_column=3)
    assert table.values.shape == (10, 3)
    assert table.columns == ["0", "1", "2"]
    assert table.labels.tolist() == [0] * 7 + [1] * 3
    assert read_table(path, label_column=-1).labels.sum() == 3
    assert read_table(path).values.shape == (10, 4)


def test_npy_must_be_2d_and_not_pickled(tmp_path):
    np.save(tmp_path / "one.npy", np.arange(5.0))
    with pytest.raises(DataError, match="2-D"):
        read_table(tmp_path / "one.npy")
    np.save(tmp_path / "obj.npy", np.array([[{"a": 1}]], dtype=object), allow_pickle=True)
    with pytest.raises(DataError, match="pickle"):
        read_table(tmp_path / "obj.npy")


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        read_table(tmp_path / "nope.csv")
    with pytest.raises(DatasetNotFoundError):
        read_table(tmp_path / "nope.csv")


def test_unknown_extension(tmp_path):
    (tmp_path / "x.xlsx").write_text("a")
    with pytest.raises(DataError, match="unknown file type.*csv"):
        read_table(tmp_path / "x.xlsx")
    assert file_format("A.CSV") == "csv" and file_format("b.csv.gz") == "csv"


def test_missing_label_column(tmp_path, frame):
    path = tmp_path / "x.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(DataError, match="no label column 'Label'.*did you mean 'label'"):
        read_table(path, label_column="Label")
    with pytest.raises(DataError, match="out of range"):
        read_table(path, label_column=9)


def test_labels_must_be_binary(tmp_path, frame):
    frame.loc[3, "label"] = 2
    path = tmp_path / "x.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(DataError, match=r"only 0.*and 1.*\[2\]"):
        read_table(path, label_column="label")


def test_nan_raises_unless_filled(tmp_path):
    path = tmp_path / "x.csv"
    pd.DataFrame({"a": [np.nan, 1.0, np.nan, 3.0], "b": [1.0, 2.0, 3.0, 4.0]}).to_csv(
        path, index=False
    )
    with pytest.raises(DataError, match="NaN"):
        read_table(path)
    table = read_table(path, fill_missing=True)
    assert table.values[:, 0].tolist() == [0.0, 1.0, 1.0, 3.0]


def test_empty_csv(tmp_path):
    (tmp_path / "e.csv").write_text("")
    with pytest.raises(DataError, match="empty"):
        read_table(tmp_path / "e.csv")


def test_errors_are_value_errors():
    assert issubclass(DataError, ValueError) and issubclass(DatasetNotFoundError, MADClusterError)


def test_as_labels():
    assert as_labels([True, False]).tolist() == [1, 0]
    assert as_labels(np.array([[0.0], [1.0]])).dtype == np.uint8
    with pytest.raises(DataError, match="missing"):
        as_labels(np.array([0.0, np.nan]))
    with pytest.raises(DataError, match="0/1"):
        as_labels(np.array(["a", "b"]))


# ------------------------------------------------------------------ header, dropped
def test_csv_without_header_keeps_every_row_and_says_so(tmp_path, caplog):
    values = np.random.default_rng(1).normal(size=(30, 3))
    path = tmp_path / "noheader.csv"
    np.savetxt(path, values, delimiter=",")
    with caplog.at_level(logging.WARNING, logger="madcluster.data.io"):
        table = read_table(path)
    assert len(table) == 30 and table.columns == ["0", "1", "2"] and not table.has_header
    np.testing.assert_allclose(table.values, values, rtol=1e-6)
    assert "first row holds only numbers" in caplog.text
    forced = read_table(path, header=True)  # the caller knows better: first row is names
    assert len(forced) == 29 and forced.has_header
    assert read_table(path, header=False, columns=[0, 2]).values.shape == (30, 2)


def test_csv_header_of_numbers_0_to_d_is_a_header(tmp_path, caplog):
    path = tmp_path / "pandas_default.csv"
    pd.DataFrame(np.ones((5, 3))).to_csv(path, index=False)  # header row "0,1,2"
    with caplog.at_level(logging.WARNING, logger="madcluster.data.io"):
        table = read_table(path)
    assert len(table) == 5 and table.has_header and caplog.text == ""


def test_headerless_label_column_error_says_no_header(tmp_path):
    path = tmp_path / "noheader.csv"
    np.savetxt(path, np.ones((5, 3)), delimiter=",")
    with pytest.raises(DataError, match=r"\(no header row\) has no label column 'label'"):
        read_table(path, label_column="label")


def test_table_reports_dropped_columns_and_keeps_timestamps(tmp_path, frame):
    path = tmp_path / "x.csv"
    frame.assign(extra=1.0).to_csv(path, index=False)
    table = read_table(path, label_column="label", drop_columns=["extra"])
    assert table.dropped == {"timestamp": "timestamp", "extra": "dropped as asked"}
    assert table.timestamp_column == "timestamp"
    assert list(table.timestamps) == list(frame["timestamp"])
    chosen = read_table(path, columns=["b"])
    assert chosen.dropped["a"] == "not selected" and chosen.timestamp_column == "timestamp"
    assert read_table(path, columns=["a"], label_column="label").timestamps is not None


def test_huge_values_in_a_file_are_too_large_to_scale(tmp_path):
    path = tmp_path / "huge.csv"
    pd.DataFrame({"a": [1.0, 1e300, 2.0], "b": [0.0, 1.0, 2.0]}).to_csv(path, index=False)
    with pytest.raises(DataError, match=r"too large to scale \(first: 1e\+300 at row 1, column 'a'"):
        read_table(path)


def test_header_only_csv_has_no_data_rows(tmp_path):
    path = tmp_path / "head.csv"
    path.write_text("a,b,c\n")
    with pytest.raises(DataError, match="has no data rows"):
        read_table(path)
