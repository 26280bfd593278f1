"""The registry of the score's parts (:data:`~madcluster.score.parts.PART_KINDS`): a kind's class
by name, and an unknown name refused with the kinds there are. Found by the mutation run of
``docs/mutation.md``."""

from __future__ import annotations

import pytest

from madcluster.exceptions import ParameterError
from madcluster.score.discord import Discord
from madcluster.score.own import OwnScore
from madcluster.score.parts import PART_KINDS, part_class, term_names


def test_each_kind_is_its_class_by_name():
    assert part_class("own") is OwnScore and part_class("discord") is Discord
    assert all(part_class(name).name == name for name in PART_KINDS)
    assert term_names() == tuple(n for n in PART_KINDS if n != "own")


def test_an_unknown_kind_is_refused_with_the_kinds_there_are():
    with pytest.raises(ParameterError, match=r"unknown part 'pca'; the parts are own, kmeans, ar"):
        part_class("pca")
