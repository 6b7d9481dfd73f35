"""What the file-reading and import tests share: the review sentences and where data lies."""

from __future__ import annotations

from ...conftest import REPO_ROOT, SST2_DIR

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
