"""What ``python -m fim_engine predict`` writes per item: one JSON-ready object.

A text's object has ``text``; a sentence pair's has ``premise`` and ``hypothesis`` instead.
Then ``label``, ``probabilities`` (label → probability, in the system's label order) and
``truncated``; with λmax, ``lambda_max``; with hints, ``hints`` and ``leverage``
(``[[word, score], ...]`` over the editable words) and, for a pair, ``word_segments`` (the
segment of each of those words, premise words first).

Example:
    >>> prediction_records(system, [SentencePair("A man sleeps.", "He is awake.")],
    ...                    fisher=True, hints=False)[0]["lambda_max"]
    0.41
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fim_engine.sentence_pairs import SentencePair, TextItem


def prediction_records(
    system: Any, items: Sequence[TextItem], *, fisher: bool, hints: bool
) -> list[dict[str, Any]]:
    """One object per item, in order; ``fisher`` adds λmax, ``hints`` (with ``fisher``) adds
    the word hints and leverage. ``system`` is a :class:`fim_engine.System`; its default
    ``editable`` decides a pair's editable words."""
    labels = system.labels
    records = [_item_fields(item) for item in items]
    if fisher:
        for record, result in zip(records, system.fisher(items, hints=hints), strict=True):
            record["label"] = result.label
            record["probabilities"] = dict(
                zip(labels, map(float, result.probabilities), strict=True)
            )
            record["truncated"] = result.truncated
            record["lambda_max"] = result.lambda_max
            if hints:
                record["hints"] = [[word, score] for word, score in result.hints]
                record["leverage"] = [[word, score] for word, score in result.leverage]
                if result.word_segments is not None:
                    record["word_segments"] = result.word_segments
        return records
    batch = system.predict(items)
    for record, label, row, cut in zip(
        records, batch.labels, batch.probabilities, batch.truncated, strict=True
    ):
        record["label"] = label
        record["probabilities"] = dict(zip(labels, map(float, row), strict=True))
        record["truncated"] = cut
    return records


def _item_fields(item: TextItem) -> dict[str, Any]:
    if isinstance(item, SentencePair):
        return {"premise": item.premise, "hypothesis": item.hypothesis}
    return {"text": item}
