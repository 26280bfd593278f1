"""TSB-AD's CSV series: file names, the reader, folders through ``load_dataset``, the rebuild."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from madcluster.data.datasets import load_dataset
from madcluster.data.train_test import Dataset
from madcluster.data.tsbad import parse_tsbad_name, read_tsbad_folder, read_tsbad_series
from madcluster.data.tsbad_rebuild import read_published_table, rebuild_series, write_tsbad_csv
from madcluster.exceptions import DataError

REPO = Path(__file__).resolve().parents[2]
PUBLISHED = REPO / "benchmarks" / "results" / "tsbad" / "published_vus_pr.csv"


def _series(n: int, d: int, first: int, name: str) -> Dataset:
    rng = np.random.default_rng(n + d)
    x = rng.normal(size=(n, d)).astype(np.float32)
    y = np.zeros(n, dtype=np.uint8)
    y[first : first + 5] = 1
    return Dataset(name=name, train=x, test=x, labels=y, columns=[f"c{i}" for i in range(d)])


def test_parse_name() -> None:
    name = parse_tsbad_name("/a/b/057_SMD_id_1_Facility_tr_4529_1st_4629.csv")
    assert (name.index, name.dataset, name.series_id, name.domain) == (57, "SMD", 1, "Facility")
    assert (name.train_length, name.first_anomaly, name.stem) == (4529, 4629, "057_SMD_id_1_Facility_tr_4529_1st_4629")
    with pytest.raises(DataError, match="not a TSB-AD file name"):
        parse_tsbad_name("machine-1-1.csv")


def test_read_series_round_trip(tmp_path: Path) -> None:
    src = _series(300, 3, 200, "x")
    path = tmp_path / "001_Toy_id_1_Sensor_tr_120_1st_200.csv"
    write_tsbad_csv(src, path)
    got = read_tsbad_series(path)
    assert got.train.shape == (120, 3) and got.test.shape == (300, 3)
    np.testing.assert_array_equal(got.test, src.test)  # float32 survives the CSV exactly
    np.testing.assert_array_equal(got.labels, src.labels)
    assert got.columns == ["c0", "c1", "c2"]


def test_read_series_errors(tmp_path: Path) -> None:
    path = tmp_path / "001_Toy_id_1_Sensor_tr_500_1st_200.csv"
    write_tsbad_csv(_series(300, 2, 200, "x"), path)
    with pytest.raises(DataError, match="first 500 points but the series has 300"):
        read_tsbad_series(path)
    path.write_text("a,b\n1,2\n3,4\n")
    with pytest.raises(DataError, match="no 'Label' column"):
        read_tsbad_series(path)


def test_load_dataset_reads_a_tsbad_folder(tmp_path: Path) -> None:
    write_tsbad_csv(_series(300, 2, 200, "a"), tmp_path / "001_Toy_id_1_S_tr_100_1st_200.csv")
    write_tsbad_csv(_series(400, 2, 250, "b"), tmp_path / "002_Toy_id_2_S_tr_150_1st_250.csv")
    data = load_dataset(tmp_path)
    assert [e.name for e in data.entities] == ["001_Toy_id_1_S_tr_100_1st_200", "002_Toy_id_2_S_tr_150_1st_250"]
    second = data.entity(1)
    assert second.train.shape == (150, 2) and second.test.shape == (400, 2)
    assert int(np.argmax(second.labels)) == 250
    write_tsbad_csv(_series(300, 3, 200, "c"), tmp_path / "003_Toy_id_3_S_tr_100_1st_200.csv")
    with pytest.raises(DataError, match="different numbers of features"):
        load_dataset(tmp_path)
    assert len(read_tsbad_folder(tmp_path)) == 3


def _fake_msl(root: Path) -> None:
    """Two MSL entities: test lengths 300 and 400, first anomalies at 200 and 250."""
    a, b = _series(300, 2, 200, "a"), _series(400, 2, 250, "b")
    (root / "MSL").mkdir()
    np.savez_compressed(root / "MSL" / "train.npz", data=np.concatenate([a.test, b.test]))
    np.savez_compressed(
        root / "MSL" / "test.npz",
        data=np.concatenate([a.test, b.test]),
        label=np.concatenate([a.labels, b.labels]),
    )
    (root / "MSL" / "entities.csv").write_text(
        "entity,train_start,train_len,test_start,test_len\nA-1,0,300,0,300\nB-2,300,400,300,400\n"
    )


def _table(path: Path, rows: list[tuple[str, int, int, int]]) -> Path:
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["file", "PCA", "ts_len", "anomaly_len", "num_anomaly"])
        for file, n, points, events in rows:
            w.writerow([file, 0.5, n, points, events])
    return path


def test_rebuild_matches_by_length_and_first_anomaly(tmp_path: Path) -> None:
    _fake_msl(tmp_path)
    table = _table(tmp_path / "t.csv", [
        ("002_MSL_id_1_Sensor_tr_150_1st_250.csv", 400, 5, 1),
        ("003_MSL_id_2_Sensor_tr_100_1st_201.csv", 300, 5, 1),  # first anomaly off by one
        ("004_Other_id_1_Sensor_tr_100_1st_200.csv", 300, 5, 1),  # not a source dataset
    ])
    rebuilt, unmatched = rebuild_series(read_published_table(table), tmp_path)
    assert [r.entity for r in rebuilt] == ["B-2"] and len(unmatched) == 1
    assert rebuilt[0].data.train.shape == (150, 2) and rebuilt[0].published.vus_pr == {"PCA": 0.5}
    bad = _table(tmp_path / "bad.csv", [("002_MSL_id_1_Sensor_tr_150_1st_250.csv", 400, 6, 1)])
    with pytest.raises(DataError, match="5 anomalous points in 1 events"):
        rebuild_series(read_published_table(bad), tmp_path)


def test_published_table_has_the_59_source_rows() -> None:
    rows = read_published_table(PUBLISHED)
    assert len(rows) == 59 and {r.name.dataset for r in rows} == {"MSL", "SMAP", "SMD"}
    assert {"PCA", "KMeansAD", "CNN"} <= set(rows[0].vus_pr)


@pytest.mark.slow
def test_real_rebuild_gives_46_series(real_data_dir: Path) -> None:
    rebuilt, _ = rebuild_series(read_published_table(PUBLISHED), real_data_dir)
    counts = {d: sum(r.published.name.dataset == d for r in rebuilt) for d in ("MSL", "SMAP", "SMD")}
    assert counts == {"MSL": 14, "SMAP": 22, "SMD": 10}
