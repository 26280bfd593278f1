import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DATA_DIR = REPO_ROOT.parent / "shared" / "datasets"


@pytest.fixture(scope="session")
def real_data_dir() -> Path:
    """The benchmark data: $MADCLUSTER_DATA_DIR if set, else ../shared/datasets next to the repository.

    Skips (with the path it looked at) only when that directory does not exist; missing files inside an
    existing data directory are real failures.
    """
    env = os.environ.get("MADCLUSTER_DATA_DIR")
    path = Path(env) if env else DEFAULT_DATA_DIR
    if not path.is_dir():
        source = (
            "$MADCLUSTER_DATA_DIR" if env else "../shared/datasets relative to the repository root"
        )
        pytest.skip(f"benchmark data directory not found at {path} (from {source})")
    return path
