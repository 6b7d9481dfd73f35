"""What the file-reading and import tests share: the review sentences, where data lies, and
the cast before breaking starts (the blind dev and starter sets freeze with the break phase)."""

from __future__ import annotations

import pytest

from ...conftest import REPO_ROOT, SST2_DIR
from ..conftest import Cast, build_cast

FIXTURES = REPO_ROOT / "fixtures" / "import"
SST2_DEV = SST2_DIR / "stsa.binary.dev"

# The sentences of every fixture in fixtures/import, in order, as they must read after decoding.
REVIEWS = [
    "Amélie is a naïve, charming fairy tale – and it’s “magnifique”…",
    "The piñata scene doesn’t work, and the café chase drags.",
    "Zoë Kazan’s performance is a revelation — tender, funny, exact.",
    "A clichéd résumé of better films; déjà vu from start to finish.",
    "Crème brûlée for the eyes: the señor’s hacienda glows on screen.",
    "Even the naïveté of its hero can’t save this “comedy”…",
]


@pytest.fixture
def cast_building(db) -> Cast:
    """The cast during the build phase: every split still takes examples."""
    return build_cast(current_phase="build")
