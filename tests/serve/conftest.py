"""Every :class:`StreamStore` a serve test makes is stopped when the test ends.

A store runs daemon threads (the stream-expiry janitor; the saver with a state folder) until
``stop()``; the app stops its store only when its lifespan runs, which a ``TestClient`` used
without ``with`` never does. Left running, forty such threads outlived the tests and woke during
the interpreter's teardown.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from madcluster.serve.registry import StreamStore


@pytest.fixture(autouse=True)
def stop_stream_stores(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    made: list[StreamStore] = []
    make = StreamStore.__init__

    def init_and_remember(self: StreamStore, *args: object, **kwargs: object) -> None:
        make(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(StreamStore, "__init__", init_and_remember)
    yield
    for store in made:
        try:
            store.stop()
        except OSError:  # a test that removed its state folder: the threads are stopped anyway
            pass


@pytest.fixture(scope="package")
def swap_models() -> tuple:
    """A served model (window 12, three channels) and the one a swap replaces it with, fitted
    once for the swap and handover tests."""
    from series_helpers import three_channels

    from madcluster import MADCluster

    before = MADCluster(window_size=12, epochs=1, random_state=0).fit(three_channels(300, 0))
    after = MADCluster(window_size=12, epochs=1, random_state=1).fit(three_channels(300, 2, 2.0))
    return before, after
