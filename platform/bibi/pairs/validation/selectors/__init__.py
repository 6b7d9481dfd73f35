"""Label validation's reads, by concern (``bibi.pairs.validation`` re-exports the public ones):

- ``states``: which pairs are validated (the scope), each pair's votes and its state
  (decided by ``scoring.agreement.pair_state``), and what scoring uses (``pairs_scored``);
- ``queue``: who validates, when validation is open, the queue's candidates, a validator's
  queue state and votes;
- ``overview``: what organizers and the results read: every pair's row, each validator's
  agreement with the majority, Krippendorff's alpha, the summary.
"""
