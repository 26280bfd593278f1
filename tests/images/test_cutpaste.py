"""CutPaste: a displaced, jittered patch of the image itself, its mask exactly the changed region."""

from __future__ import annotations

import numpy as np
import pytest

from madcluster.images.cutpaste import cutpaste


def images(n: int = 5, channels: int = 3, size: int = 32) -> np.ndarray:
    return np.random.default_rng(0).uniform(0.2, 0.8, (n, channels, size, size)).astype(np.float32)


@pytest.mark.parametrize("channels", [1, 3])
def test_only_the_masked_rectangle_changes(channels):
    x = images(channels=channels)
    pasted, masks = cutpaste(x, seed=1)
    assert pasted.shape == x.shape and pasted.dtype == x.dtype and masks.shape == (5, 32, 32)
    changed = (pasted != x).any(axis=1)
    assert not changed[~masks].any()
    for mask in masks:
        rows, cols = np.nonzero(mask)
        assert mask.sum() == (np.ptp(rows) + 1) * (np.ptp(cols) + 1) >= 4  # one filled rectangle
    assert changed[masks].mean() > 0.9


def test_without_jitter_the_patch_is_content_from_elsewhere_in_the_same_image():
    x = images(n=3)
    pasted, masks = cutpaste(x, seed=2, jitter=0.0)
    for i, mask in enumerate(masks):
        rows, cols = np.nonzero(mask)
        patch = pasted[i, :, rows.min() : rows.max() + 1, cols.min() : cols.max() + 1]
        h, w = patch.shape[1:]
        sources = [(y, c) for y in range(32 - h + 1) for c in range(32 - w + 1)
                   if np.array_equal(x[i, :, y : y + h, c : c + w], patch)]
        assert sources and all((y, c) != (rows.min(), cols.min()) for y, c in sources)


def test_deterministic_in_the_seed_and_input_untouched():
    x = images()
    before = x.copy()
    a, ma = cutpaste(x, seed=4)
    b, mb = cutpaste(x, seed=4)
    c, _ = cutpaste(x, seed=5)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ma, mb)
    assert not np.array_equal(a, c)
    np.testing.assert_array_equal(x, before)


def test_refuses_what_is_not_a_batch_of_images():
    with pytest.raises(ValueError, match=r"\[N, C, H, W\]"):
        cutpaste(np.zeros((32, 32)), seed=0)
