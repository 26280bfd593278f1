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
