"""Which head a configuration gets, and what the estimator reads from any head.

Apart from the heads themselves so that :mod:`.head` (k = 1) and :mod:`.multi_cluster` (k > 1,
built on :mod:`.head`'s contract) never import each other.
"""

from __future__ import annotations

import numpy as np
from torch import nn

from madcluster.method.config import MethodConfig
from madcluster.method.head import Head, MADClusterHead, NoHead
from madcluster.method.multi_cluster import MultiClusterHead


def build_head(n_hidden: int, config: MethodConfig) -> Head:
    """The head that ``config`` asks for: none (base-only), k = 1 (the paper), or k > 1
    (appendix)."""
    if not config.uses_head:
        return NoHead()
    if config.n_clusters > 1:
        return MultiClusterHead(n_hidden, config)
    return MADClusterHead(n_hidden, config)


def head_centers(head: nn.Module) -> list[np.ndarray]:
    """The head's current center(s) as a copy, ``[f]`` (k = 1) or ``[k, f]``; none without a
    head."""
    center = getattr(head, "center", getattr(head, "centers", None))
    return [] if center is None else [center.detach().cpu().numpy().astype(np.float64).copy()]
