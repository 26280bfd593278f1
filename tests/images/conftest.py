"""A tiny generated MVTec-layout set shared by the image tests (32 x 32, a few images a class)."""

from __future__ import annotations

import pytest
from image_helpers import TINY

from madcluster.images.synthetic import make_texture_defects


@pytest.fixture(scope="session")
def tiny_root(tmp_path_factory):
    return make_texture_defects(tmp_path_factory.mktemp("textures"), seed=3, classes=("weave", "disc"), **TINY)
