"""``python -m fim_engine``: see :mod:`fim_engine.cli`."""

from __future__ import annotations

import sys

from fim_engine.cli import main

sys.exit(main())
