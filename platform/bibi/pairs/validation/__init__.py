"""Label validation: other people label the variants again, blind, and scores use the labels
they agree on (``pairs/README.md``, "Label validation").

The package by concern:

- ``selectors/``: the reads: each pair's state and what scoring uses (``states``), the
  queue and who validates (``queue``), what organizers and the results read (``overview``);
- ``services``: the writes: the queue hands out a pair (``validation_next``), a validator
  votes (``validation_submit``) or hands it back (``validation_skip``); a pair handed out too
  long goes back; disputed votes open a contest for the organizers;
- ``serializers`` and ``apis``: the REST API (blind items for validators; votes, agreement
  and the summary for organizers).

The rule of a pair's state (waiting, validated, relabelled, disputed, invalid, unverified,
...) is not here: ``scoring.agreement.pair_state``, a pure function the selectors call.

This module re-exports the reads. The writes and the API are imported by their modules
(``from bibi.pairs.validation import services``): the services ask
``bibi.evaluation.triggers`` for a scoring run, and evaluation reads this package
(``pairs_scored``), so importing them here would close an import cycle (``evaluation.matrix``
→ this package → ``services`` → ``evaluation.triggers`` → ``evaluation.matrix``).
"""

from bibi.pairs.validation.selectors.overview import (
    VOTE_COLUMNS,
    validation_pair_rows,
    validation_summary,
    validation_vote_rows,
    validator_agreement_list,
)
from bibi.pairs.validation.selectors.queue import (
    pending_pairs,
    validation_candidates,
    validation_closed_reason,
    validation_queue_state,
    validator_history,
    validator_role,
)
from bibi.pairs.validation.selectors.states import (
    COUNT_KEYS,
    EFFECTIVE_PAIR_KEYS,
    STATES,
    PairValidation,
    ScoredPairs,
    in_sample,
    pair_validation,
    pair_validations,
    pairs_scored,
    validation_settings,
)

__all__ = [
    "COUNT_KEYS",
    "EFFECTIVE_PAIR_KEYS",
    "STATES",
    "VOTE_COLUMNS",
    "PairValidation",
    "ScoredPairs",
    "in_sample",
    "pair_validation",
    "pair_validations",
    "pairs_scored",
    "pending_pairs",
    "validation_candidates",
    "validation_closed_reason",
    "validation_pair_rows",
    "validation_queue_state",
    "validation_settings",
    "validation_summary",
    "validation_vote_rows",
    "validator_agreement_list",
    "validator_history",
    "validator_role",
]
