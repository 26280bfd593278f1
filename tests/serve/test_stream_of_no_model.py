"""A state folder holding a stream of a model the server does not serve: refused at start with the
file, the kept refits looked in and what to do, in full (the tests matched the message's start,
so a lost or garbled middle went unnoticed: the mutation run's survivors)."""

from __future__ import annotations

import pytest
from series_helpers import three_channels

from madcluster import MADCluster
from madcluster.exceptions import ModelFileError
from madcluster.serve.kept import KEPT_FOLDER
from madcluster.serve.registry import StreamStore


def _model(seed: int) -> MADCluster:
    return MADCluster(input_terms=None, window_size=12, epochs=1, random_state=seed).fit(
        three_channels(200, seed)
    )


def test_a_stream_of_another_model_is_refused_naming_where_it_looked(tmp_path):
    store = StreamStore({"m": _model(0)}, tmp_path, save_interval=0)
    store.update("s-1", None, three_channels(30, 5).tolist(), None)
    store.stop()
    with pytest.raises(ModelFileError) as refused:
        StreamStore({"m": _model(1)}, tmp_path)
    assert str(refused.value) == (
        f"stream state {str(tmp_path / 's-1.mcs')!r} belongs to none of the loaded models nor to "
        f"a refit kept in {str(tmp_path / KEPT_FOLDER)!r}; move it away or serve its model"
    )
