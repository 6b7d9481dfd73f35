"""The results of :mod:`fim_engine.suggestions`: predictions, verified suggestions and their
reports, and the check of a breaker's draft variant; each has ``to_dict()`` for JSON."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from edits.perturbations import Edit
from fim_engine.sentence_pairs import SentencePair, TextItem


def item_fields(item: TextItem) -> dict[str, str]:
    """An item's JSON fields: ``text`` for a text, ``premise`` and ``hypothesis`` for a
    sentence pair (as ``python -m fim_engine predict`` writes them)."""
    if isinstance(item, SentencePair):
        return {"premise": item.premise, "hypothesis": item.hypothesis}
    return {"text": item}


@dataclass(frozen=True)
class SystemPrediction:
    """One system's prediction on a text: the argmax label and label → probability."""

    label: str
    probabilities: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "probabilities": dict(self.probabilities)}


@dataclass(frozen=True)
class SystemOutcome:
    """One system on an edited text; ``changed`` when its label differs from its label on the
    original."""

    label: str
    probabilities: dict[str, float]
    changed: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "probabilities": dict(self.probabilities),
            "changed": self.changed,
        }


@dataclass(frozen=True)
class Suggestion:
    """A verified single-word substitution.

    ``word`` indexes the guide's words (the order of :attr:`SuggestionReport.leverage`);
    ``projection`` and ``predicted_kl`` are the guide's first-order estimates (module
    docstring); ``outcomes`` maps each system's name to what it predicts on ``text``.
    ``label_unverified``: a label-changing edit, whose new label nobody has checked (pairs made
    from it are stored so, and count only once validated). ``probe``: an embedding-neighbour
    edit, or an antonym whose words carry no opposite opinions, which claims no label at all (it
    shows what moves the model, not a pair to submit): its ``keeps_label`` is None.

    For a sentence pair, ``segment`` names the segment edited (``"premise"`` or
    ``"hypothesis"``), ``text`` is that segment edited (``edit`` points into it) and ``item``
    the whole variant pair; for a text, ``segment`` is None and ``item`` is ``text``.
    """

    text: str
    edit: Edit
    word: int
    source: str
    keeps_label: bool | None
    rationale: str
    projection: float
    predicted_kl: float
    outcomes: dict[str, SystemOutcome]
    label_unverified: bool = False
    probe: bool = False
    item: TextItem | None = None
    segment: str | None = None

    @property
    def changed(self) -> list[str]:
        """The systems whose prediction differs from theirs on the original."""
        return [name for name, outcome in self.outcomes.items() if outcome.changed]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready; a pair's suggestion also has ``segment`` and the variant's ``premise``
        and ``hypothesis``."""
        pair = (
            {"segment": self.segment, **item_fields(self.item)}
            if isinstance(self.item, SentencePair)
            else {}
        )
        return {
            "text": self.text,
            **pair,
            "edit": {
                "start": self.edit.start,
                "end": self.edit.end,
                "original": self.edit.original,
                "replacement": self.edit.replacement,
            },
            "word": self.word,
            "source": self.source,
            "keeps_label": self.keeps_label,
            "label_unverified": self.label_unverified,
            "probe": self.probe,
            "rationale": self.rationale,
            "projection": self.projection,
            "predicted_kl": self.predicted_kl,
            "outcomes": {name: outcome.to_dict() for name, outcome in self.outcomes.items()},
            "changed": self.changed,
        }


@dataclass(frozen=True)
class SuggestionReport:
    """Suggestions for one original text.

    ``lambda_max``, ``label`` and ``leverage`` (every word of the possibly truncated text,
    ``(word, first-order KL of deleting it)``) are the guide's; ``predictions`` maps every
    system to its prediction on the original; ``suggestions`` are label-keeping ones first, then
    label-changing ones, then probes, each group by projection, largest first. For a sentence
    pair, ``text`` is the pair, ``leverage`` lists the editable segments' words (premise first)
    and ``word_segments`` names the segment of each.
    """

    text: TextItem
    guide: str
    lambda_max: float
    label: str
    truncated: bool
    leverage: list[tuple[str, float]]
    predictions: dict[str, SystemPrediction]
    suggestions: list[Suggestion]
    word_segments: list[str] | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (the CLI writes one per line); a pair's report has ``premise`` and
        ``hypothesis`` in place of ``text``, and ``word_segments`` after ``leverage``."""
        segments = {} if self.word_segments is None else {"word_segments": self.word_segments}
        return {
            **item_fields(self.text),
            "guide": self.guide,
            "lambda_max": self.lambda_max,
            "label": self.label,
            "truncated": self.truncated,
            "leverage": [[word, score] for word, score in self.leverage],
            **segments,
            "predictions": {name: p.to_dict() for name, p in self.predictions.items()},
            "suggestions": [suggestion.to_dict() for suggestion in self.suggestions],
        }


@dataclass(frozen=True)
class VariantOutcome:
    """One system on an original and a draft variant of it: labels, probabilities and λmax of
    both; ``changed`` when the labels differ; ``truncated`` when either text was cut to the
    system's maximum length."""

    original: SystemPrediction
    original_lambda_max: float
    variant: SystemPrediction
    variant_lambda_max: float
    changed: bool
    truncated: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "original": self.original.to_dict(),
            "original_lambda_max": self.original_lambda_max,
            "variant": self.variant.to_dict(),
            "variant_lambda_max": self.variant_lambda_max,
            "changed": self.changed,
            "truncated": self.truncated,
        }


@dataclass(frozen=True)
class VariantCheck:
    """What every system does with a breaker's draft variant; ``outcomes`` by system name.
    ``original`` and ``variant`` are texts, or sentence pairs (``to_dict`` writes a pair as
    ``{"premise": ..., "hypothesis": ...}``)."""

    original: TextItem
    variant: TextItem
    outcomes: dict[str, VariantOutcome]

    def to_dict(self) -> dict[str, Any]:
        def shown(item: TextItem) -> Any:
            return item_fields(item) if isinstance(item, SentencePair) else item

        return {
            "original": shown(self.original),
            "variant": shown(self.variant),
            "outcomes": {name: outcome.to_dict() for name, outcome in self.outcomes.items()},
        }
