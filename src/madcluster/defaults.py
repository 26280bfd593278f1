"""Defaults that more than one layer needs before torch is imported (the command line's help, the
benchmark's configuration): written here once; the estimator's signature uses them.
"""

from __future__ import annotations

DEFAULT_WINDOW_SIZE = 100  # window length L (the paper's)
# At most 20 epochs (validation early stopping usually ends sooner); the measurements behind the
# choice are in the README's method table.
DEFAULT_EPOCHS = 20
# Training windows per epoch (drawn anew each epoch): an epoch's cost no longer grows with the
# series. Measured in benchmarks/results/fit_budget.md (synthetic suite and the 20,000 x 6 fit).
DEFAULT_EPOCH_WINDOWS = 1920
