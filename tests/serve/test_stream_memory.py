"""What a served stream holds: its own arrays, not copies of the model's or of an update's
temporaries; new streams hold their few rows."""

from __future__ import annotations

import numpy as np
import pytest

from madcluster import MADCluster
from madcluster.serve.footprint import compact, held_by_part, held_bytes
from madcluster.serve.registry import StreamStore
from madcluster.serve.streams import RowTail

WINDOW = 12


def _series(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n)[:, None]
    return np.sin(t / np.array([3.0, 7.0, 11.0, 5.0])) + 0.1 * rng.standard_normal((n, 4))


@pytest.fixture(scope="module")
def model():
    return MADCluster(window_size=WINDOW, epochs=1, random_state=0).fit(_series(400, 0))


def test_streams_of_a_model_share_its_kmeans_centroids(model):
    a, b = model.stream(), model.stream()
    first, second = (s._terms.streams["kmeans"].prefix.by_position for s in (a, b))
    assert first is second and not first.flags.writeable
    x = _series(30, 1)
    np.testing.assert_array_equal(a.update(x).scores, b.update(x).scores)  # read, never written


def test_a_large_update_leaves_no_view_of_its_temporaries(model):
    """A stream fed 2,000 rows at once holds what one fed them in small chunks holds; its scores
    go on the same."""
    x = _series(2100, 2)
    big, small = model.stream(), model.stream()
    big.update(x[:2000])
    before = held_bytes(big)
    for i in range(0, 2000, 10):
        small.update(x[i : i + 10])
    freed = compact(big)
    assert freed > 0 and held_bytes(big) == before - freed
    assert held_bytes(big) <= 1.1 * held_bytes(small) < before / 2
    # to rounding: the discord part's at-once reading is its streamed subsequences' distances,
    # whose sliding products a chunk of 2,000 rows refreshes at other rows than chunks of 10
    np.testing.assert_allclose(
        big.update(x[2000:]).scores, small.update(x[2000:]).scores, rtol=1e-12, atol=1e-12
    )


def test_the_store_compacts_after_a_large_update_and_a_new_stream_holds_its_rows(model):
    store = StreamStore({"m": model})
    x = _series(1500, 3)
    store.update("long", None, x.tolist(), None)
    reference = model.stream()
    for i in range(0, 1500, 10):
        reference.update(x[i : i + 10])
    assert held_bytes(store.get("long").scorer) <= 1.1 * held_bytes(reference)
    store.update("new", None, x[:1].tolist(), None)
    tail = store.get("new").tail
    assert tail.nbytes == 4 * 4 and tail.capacity == 1024  # one row of 4 float32 columns
    assert store.get("long").tail.nbytes == 1024 * 4 * 4


def test_the_tail_keeps_rows_as_the_scorer_reads_them(model):
    """float32: the scorer's input checks make every row float32, so a replay is exact."""
    rows = _series(50, 4) * 1e3 + 1 / 3
    tail = RowTail(64, 4)
    tail.append(rows)
    assert tail.rows().dtype == np.float32
    np.testing.assert_array_equal(
        model.stream().update(tail.rows()).scores, model.stream().update(rows).scores
    )


def test_the_count_names_each_part_and_includes_the_discord_sliding_products(model):
    """The discord part's sliding products are each stream's own (up to 64 KiB a join): counted
    against --max-stream-memory, and named in the breakdown the memory record gives."""
    stream = model.stream()
    stream.update(_series(300, 5))
    discord = stream._terms.streams["discord"]
    joins = getattr(discord, "streams", [discord])
    products = sum(j.products.products.nbytes for j in joins if j.products)
    assert products > 0  # this small model's joins stream by the sliding products
    parts = held_by_part(stream)
    assert parts["discord"] >= products and sum(parts.values()) >= held_bytes(stream)
    assert {"kmeans", "ar", "discord", "own reading", "ar reading"} <= set(parts)
