"""The errors systems raise for a builder to hear about, importable by every app without
importing the systems services (which the evaluation app's triggers are called from)."""

from __future__ import annotations

from bibi.files import FileRejected


class ValidationFailed(Exception):
    """A validation step failed for a reason the builder must hear about."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


class PredictionsRejected(FileRejected):
    """A predictions file with problems: every one is listed, nothing is stored."""
