"""The one exception the library raises for bad input."""

from __future__ import annotations


class ScoringInputError(ValueError):
    """Input that cannot be scored: a missing column, a missing or conflicting prediction,
    a missing weight, an unknown mode.

    The message names the column, system, pair or text at fault, so it can be shown to the
    person who uploaded the file as it is.

    >>> raise ScoringInputError("predictions is missing column(s) label")
    Traceback (most recent call last):
    ...
    scoring.errors.ScoringInputError: predictions is missing column(s) label
    """
