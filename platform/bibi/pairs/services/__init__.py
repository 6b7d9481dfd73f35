"""Writes for pair sets, pairs and contests: the package's public names, re-exported from
``pair_sets`` (whole sets), ``drafts`` (one pair at a time, the entry) and ``contests``.

Pair sets are submitted whole (``pair_set_upload`` for a file, ``pair_list_submit`` for a
JSON list, ``pair_set_submit`` for pairs already parsed; the first two refuse an upload
identical to a set the team submitted) or built one pair at a time in the team's draft
(``pair_add``, ``pair_remove``, then ``pair_set_draft_submit``). Every pair is checked by
``checks``; a set with one failing pair stores nothing, and ``PairSetRejected`` lists every
problem by row. The break phase is read off the server clock once per call, and that moment
is the set's ``submitted_at``.

A submission answers with a ``PairSetSubmission``: whether the new set is the team's entry,
which entry it replaced or which set marked final stays the entry, and warnings that do not
stop the set (an edit systems may not see, a row repeated in a 2017 file). A *dry run* goes
through every check and answers the same, and stores nothing.

Submissions of one team are serialized by locking the team's row, so two uploads at once
cannot both slip under the quota or leave two drafts.
"""

from bibi.pairs.services.contests import (
    REASON_MAX_CHARS,
    Adjudication,
    contest_adjudicate,
    contest_create,
)
from bibi.pairs.services.drafts import (
    pair_add,
    pair_remove,
    pair_set_draft_submit,
    pair_set_mark_final,
)
from bibi.pairs.services.pair_sets import (
    PAIR_SET_FILE,
    PairSetRejected,
    PairSetSubmission,
    pair_set_size_require,
    pair_set_submit,
    pair_set_submit_require,
)
from bibi.pairs.services.pair_uploads import pair_list_submit, pair_set_upload

__all__ = [
    "PAIR_SET_FILE",
    "REASON_MAX_CHARS",
    "Adjudication",
    "PairSetRejected",
    "PairSetSubmission",
    "contest_adjudicate",
    "contest_create",
    "pair_add",
    "pair_list_submit",
    "pair_remove",
    "pair_set_draft_submit",
    "pair_set_mark_final",
    "pair_set_size_require",
    "pair_set_submit",
    "pair_set_submit_require",
    "pair_set_upload",
]
