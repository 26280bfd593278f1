"""The generated texture-defect set: deterministic from its seed, masks where the image changed."""

from __future__ import annotations

import numpy as np
from image_helpers import TINY

from madcluster.images.synthetic import DEFECTS, add_defect, make_texture_defects, normal_image


def _files(root):
    return {p.relative_to(root): p.read_bytes() for p in sorted(root.rglob("*.png"))}


def test_same_seed_same_bytes_other_seed_other_images(tmp_path, tiny_root):
    again = make_texture_defects(tmp_path / "a", seed=3, classes=("weave", "disc"), **TINY)
    assert _files(again) == _files(tiny_root)
    other = make_texture_defects(tmp_path / "b", seed=4, classes=("weave", "disc"), **TINY)
    assert _files(other).keys() == _files(tiny_root).keys() and _files(other) != _files(tiny_root)


def test_each_defect_changes_exactly_its_mask_region():
    rng = np.random.default_rng(0)
    for cls in ("speckle", "ring"):
        for defect in DEFECTS:
            img, region = normal_image(cls, 48, rng)
            bad, mask = add_defect(img, region, defect, rng)
            changed = np.abs(bad - img).max(axis=2) > 0.02
            assert mask.any(), (cls, defect)
            assert (changed == mask.astype(bool)).all(), (cls, defect)
