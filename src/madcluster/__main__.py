"""``python -m madcluster`` runs the command line."""

import sys

from madcluster.cli import main

sys.exit(main())
