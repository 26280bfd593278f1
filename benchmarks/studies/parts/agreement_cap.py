"""Issue 34, held-out set C's runaway part: an agreement cap, tried on the development families and
on the shifted-normal proxy of ``shifted_parts.py``.

Rule: each part's weighted positive excess is at most K times its training 99.9th percentile plus
the other parts' excesses summed (a part may run away only where the others agree). Reads
``part_study.py``'s caches (with ``part_weights.py``'s discord reading) and ``shifted_parts.py``'s
dumps (10 series; the dumps hold no training reading of the discord part, so its cap is read from
the dump's first 1,000 unshifted test rows: a stand-in). The default's weights per series.
Exploratory, not adopted (``benchmarks/results/parts/weights.md``)::

    python benchmarks/studies/parts/agreement_cap.py --bundle /tmp/dev_bundle.npz \\
        --cache /tmp/part_cache --shifted /tmp/shifted
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/: benchlib
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/studies/: lib
from lib import cap_tables

if __name__ == "__main__":
    cap_tables(doc=__doc__)
