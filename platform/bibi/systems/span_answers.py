"""Span answers as bibi stores them, scored by the task's answer rule (``scoring.answers``).

A span answer is a dict ``{"start": s, "end": e, "text": t}`` (character offsets into its own
sentence, end exclusive): gold answers on ``Example.answers`` and ``Pair.*_answers``, a
system's answer on ``Prediction.answer_start/answer_end/answer_text``. A self-reported answer
given as text gets the offsets the gold answers' rule gives it (``answer_offsets``: whole
words, the occurrence nearest the predicate); one that is not a whole-word span keeps no
offsets and so is wrong under the overlap rules, which compare offsets.

``span_scores`` is the one call that turns stored answers into correctness and token F1, used
for the blind dev set (dev accuracy and dev token F1 of a version) and for pair items (the
scoring run).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from bibi.sharedtasks.models import SharedTask
from bibi.tasktypes.span_extraction.answers import answer_locate
from scoring.answers import answer_scores


@dataclass(frozen=True)
class SpanAnswer:
    """One system's answer to one item; ``start``/``end`` are None when only text is known."""

    text: str
    start: int | None = None
    end: int | None = None


def answer_offsets(
    sentence: str, text: str, *, anchor: tuple[int, int] | None = None
) -> tuple[tuple[int, int] | None, str]:
    """Offsets of the answer ``text`` in ``sentence`` by the gold answers' rule
    (``span_extraction.answers.answer_locate``: whole words, nearest ``anchor``, the
    predicate), and '' ; or None and '' when it is no whole-word span there; or None and why
    when it is ambiguous (the caller refuses it).

    >>> answer_offsets("UCD beat St Vincents.", " St Vincents ")
    ((9, 20), '')
    >>> answer_offsets("you and you", "you", anchor=(8, 11))
    ((8, 11), '')
    """
    found, problem = answer_locate(sentence, text, anchor=anchor)
    if found is not None:
        return (found["start"], found["end"]), ""
    return None, problem if " occurs " in problem else ""


def span_scores(
    *,
    shared_task: SharedTask,
    predictions: Iterable[tuple[Hashable, Hashable, SpanAnswer]],
    gold: Mapping[Hashable, Sequence[Mapping[str, Any]]],
) -> pd.DataFrame:
    """``system, item, correct, token_f1`` for each (system, item, answer) of ``predictions``.

    gold: item → its gold answers (dicts with ``start``, ``end``, ``text``). Correctness
    follows the task's ``answer_mode`` and ``answer_f1_threshold``. An answer without offsets
    is scored with an empty span (0, 0) where the mode compares offsets.

    Raises scoring.errors.ScoringInputError when an item has no gold answer.
    """
    rows = [
        (system, item, answer.text, answer.start or 0, answer.end or 0)
        for system, item, answer in predictions
    ]
    predicted = pd.DataFrame(rows, columns=["system", "item", "text", "start", "end"])
    golden = pd.DataFrame(
        [
            (item, answer["text"], answer["start"], answer["end"])
            for item, answers in gold.items()
            for answer in answers
        ],
        columns=["item", "text", "start", "end"],
    )
    if predicted.empty:
        return pd.DataFrame(columns=["system", "item", "correct", "token_f1"])
    return answer_scores(
        predicted,
        golden,
        mode=shared_task.answer_mode,
        threshold=shared_task.answer_f1_threshold,
    )
