"""`python -m scoring`: see scoring.cli."""

from __future__ import annotations

import sys

from scoring.cli import main

sys.exit(main())
