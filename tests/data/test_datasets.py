import csv

import numpy as np
import pandas as pd
import pytest

from madcluster.data.datasets import BENCHMARKS, Dataset, Entity, load_dataset, resolve_data_dir
from madcluster.exceptions import DataError, DatasetNotFoundError

# ---------------------------------------------------------------------------------------------
# real data (shared/datasets): the paper's shapes, exactly


@pytest.mark.realdata
@pytest.mark.slow
@pytest.mark.parametrize(
    "name, n_train, n_test, dims, n_anomalous, n_entities",
    [
        ("MSL", 58_317, 73_729, 55, 7_766, 27),
        ("SMAP", 135_183, 427_617, 25, 54_696, 53),
        ("SMD", 450_219, 450_232, 38, 20_763, 19),
    ],
)
def test_real_benchmark_shapes(real_data_dir, name, n_train, n_test, dims, n_anomalous, n_entities):
    ds = load_dataset(name.lower(), data_dir=real_data_dir)
    assert ds.name == name
    assert ds.train.shape == (n_train, dims) and ds.train.dtype == np.float32
    assert ds.test.shape == (n_test, dims) and ds.test.dtype == np.float32
    assert ds.labels.shape == (n_test,) and ds.labels.dtype == np.uint8
    assert int(ds.labels.sum()) == n_anomalous
    assert len(ds.entities) == n_entities
    # the entities tile the concatenated arrays
    assert sum(e.train_slice.stop - e.train_slice.start for e in ds.entities) == n_train
    assert sum(e.test_slice.stop - e.test_slice.start for e in ds.entities) == n_test
    assert sum(int(sub.labels.sum()) for sub in ds.iter_entities()) == n_anomalous


@pytest.mark.realdata
def test_real_anomaly_ratios(real_data_dir):
    ratios = {n: load_dataset(n, data_dir=real_data_dir).anomaly_ratio for n in ("MSL", "SMAP")}
    assert ratios["MSL"] == pytest.approx(0.10533, abs=5e-6)
    assert ratios["SMAP"] == pytest.approx(0.12791, abs=5e-6)


@pytest.mark.slow
@pytest.mark.realdata
def test_real_smd_machines(real_data_dir):
    ds = load_dataset("SMD", data_dir=real_data_dir)
    assert ds.anomaly_ratio == pytest.approx(0.04612, abs=5e-6)
    names = [e.name for e in ds.entities]
    missing = {
        "machine-1-1",
        "machine-2-6",
        "machine-2-9",
        "machine-3-1",
        "machine-3-6",
        "machine-3-7",
        "machine-3-8",
        "machine-3-9",
        "machine-3-11",
    }  # data_available == 0
    assert not missing & set(names)
    assert names[0] == "machine-1-2"
    m = ds.entity("machine-1-2")
    assert m.train.shape == (23_694, 38) and m.test.shape == (23_694, 38)
    assert int(m.labels.sum()) == 542
    assert np.shares_memory(m.train, ds.train)  # views, not copies


@pytest.mark.realdata
def test_real_psm(real_data_dir):
    psm_dir = real_data_dir / "PSM"
    if (psm_dir / "train.csv").is_file() and (psm_dir / "test.csv").is_file():
        ds = load_dataset("PSM", data_dir=real_data_dir)
        assert ds.train.shape == (132_481, 25) and ds.test.shape == (87_841, 25)
        assert ds.anomaly_ratio == pytest.approx(0.27756, abs=5e-6)
    else:  # the shared copy has labels only: the error must say so
        with pytest.raises(DatasetNotFoundError, match="missing: train.csv, test.csv") as err:
            load_dataset("PSM", data_dir=real_data_dir)
        assert "RANSynCoders" in str(err.value)


# ---------------------------------------------------------------------------------------------
# small fake benchmarks in the shared/datasets format


def _write_npz_benchmark(root, name, *, lengths=((30, 40), (20, 25)), dims=3, unavailable=()):
    folder = root / name
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    n_train = sum(a for a, _ in lengths)
    n_test = sum(b for _, b in lengths)
    labels = np.zeros(n_test, dtype=np.uint8)
    labels[5:9] = 1
    np.savez_compressed(folder / "train.npz", data=rng.normal(size=(n_train, dims)))
    np.savez_compressed(folder / "test.npz", data=rng.normal(size=(n_test, dims)), label=labels)
    with open(folder / "entities.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(
            ["entity", "data_available", "train_start", "train_len", "test_start", "test_len"]
        )
        s = u = 0
        for i, (a, b) in enumerate(lengths):
            w.writerow([f"e-{i}", 1, s, a, u, b])
            s, u = s + a, u + b
        for extra in unavailable:
            w.writerow([extra, 0, -1, 0, -1, 0])
    return folder


def test_fake_benchmark_and_entities(tmp_path):
    _write_npz_benchmark(tmp_path, "SMD", unavailable=("e-gone",))
    ds = load_dataset("smd", data_dir=tmp_path)
    assert isinstance(ds, Dataset)
    assert ds.train.shape == (50, 3) and ds.train.dtype == np.float32
    assert ds.test.shape == (65, 3) and ds.labels.sum() == 4
    assert [e.name for e in ds.entities] == ["e-0", "e-1"]
    assert ds.entities[1] == Entity("e-1", slice(30, 50), slice(40, 65))
    assert ds.n_features == 3
    sub = ds.entity("E-1")  # case-insensitive fallback
    assert sub.name == "SMD/e-1" and sub.train.shape == (20, 3) and sub.test.shape == (25, 3)
    assert sub.entities == [Entity("e-1", slice(0, 20), slice(0, 25))]
    np.testing.assert_array_equal(ds.entity(0).labels, ds.labels[:40])
    assert [d.name for d in ds.iter_entities()] == ["SMD/e-0", "SMD/e-1"]
    with pytest.raises(KeyError, match="e-0, e-1"):
        ds.entity("nope")
    with pytest.raises(IndexError):
        ds.entity(5)
    assert "SMD" in repr(ds) and "entities=2" in repr(ds)


def test_entities_out_of_range_is_an_error(tmp_path):
    folder = _write_npz_benchmark(tmp_path, "MSL")
    text = (folder / "entities.csv").read_text().replace("e-1,1,30,20", "e-1,1,30,99")
    (folder / "entities.csv").write_text(text)
    with pytest.raises(DataError, match="outside"):
        load_dataset("MSL", data_dir=tmp_path)


def test_data_dir_order(tmp_path, monkeypatch):
    arg_dir, env_dir = tmp_path / "arg", tmp_path / "env"
    _write_npz_benchmark(arg_dir, "MSL", lengths=((10, 10),))
    _write_npz_benchmark(env_dir, "MSL", lengths=((12, 12),))
    cwd_dir = tmp_path / "work" / "repo"
    cwd_dir.mkdir(parents=True)
    _write_npz_benchmark(tmp_path / "work" / "shared" / "datasets", "MSL", lengths=((14, 14),))
    monkeypatch.chdir(cwd_dir)

    monkeypatch.setenv("MADCLUSTER_DATA_DIR", str(env_dir))
    assert len(load_dataset("MSL", data_dir=arg_dir).train) == 10  # 1. argument
    assert len(load_dataset("MSL").train) == 12  # 2. environment variable
    monkeypatch.delenv("MADCLUSTER_DATA_DIR")
    assert len(load_dataset("MSL").train) == 14  # 3. ../shared/datasets from the working directory
    assert resolve_data_dir().resolve() == (tmp_path / "work" / "shared" / "datasets").resolve()


def test_no_data_dir_error(tmp_path, monkeypatch):
    monkeypatch.delenv("MADCLUSTER_DATA_DIR", raising=False)
    (tmp_path / "a").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    with pytest.raises(DatasetNotFoundError, match="MADCLUSTER_DATA_DIR") as err:
        load_dataset("MSL")
    assert "train.npz" in str(err.value) and "telemanom" in str(err.value)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_dataset("MSL", data_dir=tmp_path / "nowhere")


@pytest.mark.parametrize(
    "name, source",
    [
        ("MSL", "khundman/telemanom"),
        ("SMAP", "khundman/telemanom"),
        ("SMD", "NetManAIOps/OmniAnomaly"),
        ("PSM", "eBay/RANSynCoders"),
    ],
)
def test_missing_files_error_names_files_path_and_source(tmp_path, name, source):
    (tmp_path / name).mkdir()
    with pytest.raises(DatasetNotFoundError) as err:
        load_dataset(name, data_dir=tmp_path)
    msg = str(err.value)
    for f in BENCHMARKS[name].files:
        assert f in msg
    assert str((tmp_path / name).resolve()) in msg
    assert source in msg
    assert isinstance(err.value, FileNotFoundError) and isinstance(err.value, ValueError)


def test_unknown_name_lists_known_names(tmp_path):
    with pytest.raises(DatasetNotFoundError, match="MSL, PSM, SMAP, SMD"):
        load_dataset("SWaT", data_dir=tmp_path)
    with pytest.raises(DatasetNotFoundError, match="does not exist"):
        load_dataset(tmp_path / "no-such-folder")


# ---------------------------------------------------------------------------------------------
# PSM in its public CSV format


def _write_psm(folder, *, n_train=12, n_test=8, label_rows=None):
    folder.mkdir(parents=True, exist_ok=True)
    cols = [f"feature_{i}" for i in range(3)]
    train = pd.DataFrame(np.arange(n_train * 3, dtype=float).reshape(n_train, 3), columns=cols)
    train.iloc[0, 1] = np.nan  # leading gap -> 0
    train.iloc[4:6, 2] = np.nan  # inner gap -> forward fill
    train.insert(0, "timestamp_(min)", np.arange(n_train, dtype=float))
    test = pd.DataFrame(np.ones((n_test, 3)), columns=cols)
    test.insert(0, "timestamp_(min)", np.arange(n_train, n_train + n_test, dtype=float))
    n_lab = n_test if label_rows is None else label_rows
    labels = pd.DataFrame(
        {
            "timestamp_(min)": np.arange(n_train, n_train + n_lab, dtype=float),
            "label": ([0, 1] * n_lab)[:n_lab],
        }
    )
    train.to_csv(folder / "train.csv", index=False)
    test.to_csv(folder / "test.csv", index=False)
    labels.to_csv(folder / "test_label.csv", index=False)
    return train


def test_psm_format(tmp_path):
    raw = _write_psm(tmp_path / "PSM")
    ds = load_dataset("psm", data_dir=tmp_path)
    assert ds.name == "PSM"
    assert ds.columns == ["feature_0", "feature_1", "feature_2"]  # timestamp dropped
    assert ds.train.shape == (12, 3) and ds.test.shape == (8, 3)
    assert np.isfinite(ds.train).all()
    assert ds.train[0, 1] == 0.0  # nothing to forward-fill from: 0
    assert ds.train[4, 2] == ds.train[5, 2] == raw.iloc[3, 3]  # forward-filled
    assert ds.labels.tolist() == [0, 1] * 4
    assert len(ds.entities) == 1 and ds.entity("PSM").test.shape == (8, 3)


def test_psm_label_length_mismatch(tmp_path):
    _write_psm(tmp_path / "PSM", label_rows=5)
    with pytest.raises(DataError, match="5 rows"):
        load_dataset("PSM", data_dir=tmp_path)


# ---------------------------------------------------------------------------------------------
# user folders


def test_user_folder_csv(tmp_path):
    rng = np.random.default_rng(1)
    folder = tmp_path / "mine"
    folder.mkdir()
    pd.DataFrame({"time": range(30), "a": rng.normal(size=30), "b": rng.normal(size=30)}).to_csv(
        folder / "train.csv", index=False
    )
    pd.DataFrame(
        {
            "time": range(20),
            "a": rng.normal(size=20),
            "b": rng.normal(size=20),
            "label": [0] * 18 + [1] * 2,
        }
    ).to_csv(folder / "test.csv", index=False)
    ds = load_dataset(folder)
    assert ds.name == "mine" and ds.columns == ["a", "b"]
    assert ds.train.shape == (30, 2) and ds.test.shape == (20, 2) and ds.labels.sum() == 2
    assert load_dataset(str(folder)).test.shape == (20, 2)
    # a bare folder name is also looked up in the data directory
    assert load_dataset("mine", data_dir=tmp_path).train.shape == (30, 2)


def test_user_folder_parquet_and_label_file(tmp_path):
    pytest.importorskip("pyarrow")
    folder = tmp_path / "pq"
    folder.mkdir()
    pd.DataFrame({"x": np.arange(10.0), "label": 0}).to_parquet(
        folder / "train.parquet"
    )  # train label ignored
    pd.DataFrame({"x": np.arange(6.0)}).to_parquet(folder / "test.parquet")
    pd.DataFrame({"label": [0, 0, 1, 1, 0, 0]}).to_csv(folder / "test_label.csv", index=False)
    ds = load_dataset(folder)
    assert ds.columns == ["x"] and ds.labels.tolist() == [0, 0, 1, 1, 0, 0]


def test_user_folder_npy_label_as_last_column(tmp_path):
    folder = tmp_path / "np"
    folder.mkdir()
    np.save(folder / "train.npy", np.zeros((10, 2)))
    test = np.zeros((5, 3))
    test[2, 2] = 1
    np.save(folder / "test.npy", test)
    ds = load_dataset(folder)
    assert ds.test.shape == (5, 2) and ds.labels.tolist() == [0, 0, 1, 0, 0]
    np.save(folder / "test.npy", np.zeros((5, 2)))
    with pytest.raises(DataError, match="no test labels"):
        load_dataset(folder)
    np.save(folder / "test_label.npy", np.array([0, 1, 0, 0, 0]))
    assert load_dataset(folder).labels.sum() == 1


def test_user_folder_errors(tmp_path):
    folder = tmp_path / "bad"
    folder.mkdir()
    pd.DataFrame({"a": [1.0, 2.0]}).to_csv(folder / "train.csv", index=False)
    with pytest.raises(DatasetNotFoundError, match="no test file"):
        load_dataset(folder)
    pd.DataFrame({"b": [1.0, 2.0], "label": [0, 1]}).to_csv(folder / "test.csv", index=False)
    with pytest.raises(DataError, match="columns differ"):
        load_dataset(folder)
    np.save(folder / "train.npy", np.zeros((3, 1)))
    with pytest.raises(DataError, match="several train files"):
        load_dataset(folder)
