"""Generic defects injected into normal images, to choose among options on training images only.

CutPaste (Li et al., CVPR 2021): a rectangle cut from one place of a normal image, its brightness
and colour jittered, pasted at another place; the pasted rectangle is the defect mask. Unlike the
generated set's test defects (scratches, holes, stains, colour patches) it brings no new texture,
only displaced normal content, so an option chosen on it is not chosen on the test defect types.
"""

from __future__ import annotations

import numpy as np


def cutpaste(
    images: np.ndarray, seed: int, *, area: tuple[float, float] = (0.02, 0.08), jitter: float = 0.1
) -> tuple[np.ndarray, np.ndarray]:
    """One CutPaste copy of each image ``[N, C, H, W]`` (values in [0, 1]) and its mask
    ``[N, H, W]``.

    area: the patch's fraction of the image, drawn uniformly; its aspect ratio is drawn in [0.3,
        3.3]
    (log-uniform). jitter: the largest per-channel brightness change of the patch. Deterministic in
    ``seed``.
    """
    if images.ndim != 4 or len(images) == 0:
        raise ValueError(f"cutpaste needs images [N, C, H, W], got shape {images.shape}")
    rng = np.random.default_rng(seed)
    n, channels, height, width = images.shape
    out = images.copy()
    masks = np.zeros((n, height, width), dtype=bool)
    for i in range(n):
        fraction = rng.uniform(*area)
        aspect = np.exp(rng.uniform(np.log(0.3), np.log(1 / 0.3)))
        ph = int(np.clip(round(np.sqrt(fraction * height * width * aspect)), 2, height // 2))
        pw = int(np.clip(round(np.sqrt(fraction * height * width / aspect)), 2, width // 2))
        sy, sx = rng.integers(0, height - ph + 1), rng.integers(0, width - pw + 1)
        while True:  # paste somewhere else than where it was cut
            ty, tx = rng.integers(0, height - ph + 1), rng.integers(0, width - pw + 1)
            if abs(ty - sy) >= ph // 2 or abs(tx - sx) >= pw // 2:
                break
        patch = images[i, :, sy : sy + ph, sx : sx + pw]
        shift = rng.uniform(-jitter, jitter, (channels if channels == 3 else 1, 1, 1))
        out[i, :, ty : ty + ph, tx : tx + pw] = np.clip(patch + shift, 0.0, 1.0)
        masks[i, ty : ty + ph, tx : tx + pw] = True
    return out.astype(images.dtype, copy=False), masks
