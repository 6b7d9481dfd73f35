"""Edit suggestions for span items (QA-SRL): edits outside the answer, verified by a forward pass.

A breaker of a span task changes the sentence, never the question, and the question must stay
answerable by a span of the new sentence. :func:`span_suggest` takes candidate edits of the
sentence (any :mod:`fim_engine.perturbations` generator's output), ranks them by the guide
system's word leverage (the first-order KL of deleting the edited words along the top
eigenvector of the span Fisher metric, :func:`fim_engine.spans.span_fisher`) and splits them:

* **keeps the answer**: an edit meant to keep the label (``Perturbation.keeps_label``) that lies
  wholly outside every gold answer. The gold answers stay spans of the variant, moved by the
  edit's change of length (:func:`answers_after`), so every system's answer on the variant is
  scored against them: a suggestion **breaks** a system that was right on the original and is
  wrong on the variant. These are verified by construction and by the forward pass.
* **meant to move it**: an edit that touches a gold answer, or one meant to change the meaning
  (an antonym, a negation). Its gold answer is unknown until a person gives it, so it is
  reported with each system's answer on the variant and ``changed`` (the answer text moved)
  but never as a break: *label unverified*, as for machine-made label changes of label tasks.

Correctness follows one of :data:`scoring.answers.ANSWER_MODES` (default ``token_f1``).

Example:
    >>> report = span_suggest({"qa": system}, "who beat someone ?", sentence,
    ...                       [{"start": 0, "end": 3, "text": "UCD"}], keyboard_typos(sentence))
    >>> [(s.text, s.breaks) for s in report if s.keeps_answer][:1]
    [('UCD finished ... by beating St Vincnets in the final .', ('qa',))]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from fim_engine.perturbations import Edit, Perturbation
from fim_engine.span_model import SpanPrediction, SpanSystem
from scoring.answers import answer_scores, normalize_answer


@dataclass(frozen=True)
class SpanOutcome:
    """One system on a suggestion: its answer on the original and on the variant, and whether
    each is right (``right_after`` None when the variant's gold answer is unknown)."""

    system: str
    original: SpanPrediction
    variant: SpanPrediction
    right_before: bool
    right_after: bool | None


@dataclass(frozen=True)
class SpanSuggestion:
    """A variant sentence, the edit that made it, and what the systems answer on it.

    ``answers`` are the gold answers in the variant (empty when the edit is meant to move
    them); ``leverage`` is the guide's leverage of the edited words.
    """

    text: str
    edit: Edit
    source: str
    rationale: str
    keeps_answer: bool
    answers: tuple[dict[str, Any], ...]
    leverage: float
    outcomes: tuple[SpanOutcome, ...]

    @property
    def breaks(self) -> tuple[str, ...]:
        """Systems right on the original and wrong on the variant (answer-keeping edits only)."""
        return tuple(o.system for o in self.outcomes if o.right_before and o.right_after is False)

    @property
    def changed(self) -> tuple[str, ...]:
        """Systems whose (normalised) answer text differs between original and variant."""
        return tuple(
            o.system
            for o in self.outcomes
            if normalize_answer(o.original.text) != normalize_answer(o.variant.text)
        )


def answers_after(edit: Edit, answers: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]] | None:
    """The gold answers in the edited sentence, or None when the edit touches one of them.

    An edit touches an answer when it replaces a character of it, or inserts strictly inside
    it; an answer after the edit moves by the edit's change of length.

    >>> answers_after(Edit(4, 8, "beat", "defeated"), [{"start": 0, "end": 3, "text": "UCD"},
    ...                                               {"start": 9, "end": 12, "text": "Bob"}])
    [{'start': 0, 'end': 3, 'text': 'UCD'}, {'start': 13, 'end': 16, 'text': 'Bob'}]
    """
    shift = len(edit.replacement) - (edit.end - edit.start)
    moved = []
    for answer in answers:
        start, end = int(answer["start"]), int(answer["end"])
        if edit.start == edit.end:  # an insertion touches an answer only strictly inside it
            touches = start < edit.start < end
        else:
            touches = edit.start < end and start < edit.end
        if touches:
            return None
        delta = shift if start >= edit.end else 0
        moved.append({"start": start + delta, "end": end + delta, "text": answer["text"]})
    return moved


def word_spans(sentence: str, words: Sequence[str]) -> list[tuple[int, int]]:
    """Character spans of ``words``, substrings of ``sentence`` in order (as span systems
    report a sentence's words)."""
    spans, cursor = [], 0
    for word in words:
        start = sentence.index(word, cursor)
        spans.append((start, start + len(word)))
        cursor = start + len(word)
    return spans


def span_suggest(
    systems: Mapping[str, SpanSystem],
    question: str,
    sentence: str,
    answers: Sequence[Mapping[str, Any]],
    perturbations: Sequence[Perturbation],
    *,
    top_k: int = 5,
    mode: str = "token_f1",
) -> list[SpanSuggestion]:
    """The ``top_k`` answer-keeping and the ``top_k`` answer-moving edits of ``sentence`` with
    the most guide leverage (the first system of ``systems`` is the guide), each verified by
    every system's forward pass; answer-keeping ones first, each group by leverage."""
    if not systems:
        raise ValueError("span_suggest needs at least one system")
    guide = next(iter(systems.values()))
    fisher = guide.fisher([question], [sentence])[0]
    words, leverage = [w for w, _ in fisher.leverage], [kl for _, kl in fisher.leverage]
    chosen = _ranked(perturbations, answers, word_spans(sentence, words), leverage, top_k)
    variants = [row[2].text for row in chosen]
    before = {name: system.predict([question], [sentence])[0] for name, system in systems.items()}
    after = {
        name: system.predict([question] * len(variants), variants)
        for name, system in systems.items()
    }
    right_before = _right(mode, {name: [p] for name, p in before.items()}, [list(answers)])
    right_after = _right(mode, after, [row[3] or [] for row in chosen])
    return [
        SpanSuggestion(
            text=perturbation.text,
            edit=perturbation.edit,
            source=perturbation.source,
            rationale=perturbation.rationale,
            keeps_answer=keeps,
            answers=tuple(moved or ()),
            leverage=float(leverage),
            outcomes=tuple(
                SpanOutcome(
                    name,
                    before[name],
                    after[name][row],
                    right_before[name][0],
                    right_after[name][row] if keeps else None,
                )
                for name in systems
            ),
        )
        for row, (keeps, _, perturbation, moved, leverage) in enumerate(chosen)
    ]


Ranked = tuple[bool, float, Perturbation, list[dict[str, Any]] | None, float]


def _ranked(
    perturbations: Sequence[Perturbation],
    answers: Sequence[Mapping[str, Any]],
    spans: Sequence[tuple[int, int]],
    leverage: Sequence[float],
    top_k: int,
) -> list[Ranked]:
    """``(keeps the answer, −leverage, perturbation, moved answers, leverage)`` of the
    ``top_k`` answer-keeping edits, then of the ``top_k`` others, each by leverage."""
    scored: list[Ranked] = []
    for perturbation in perturbations:
        edit = perturbation.edit
        moved = answers_after(edit, answers) if perturbation.keeps_label else None
        # An insertion reaches the word it is inserted into or before.
        reach = (edit.start, max(edit.end, edit.start + 1))
        total = sum(
            kl for (a, b), kl in zip(spans, leverage, strict=True) if a < reach[1] and reach[0] < b
        )
        scored.append((moved is not None, -total, perturbation, moved, total))
    keeping = sorted((row for row in scored if row[0]), key=lambda row: row[1])[:top_k]
    moving = sorted((row for row in scored if not row[0]), key=lambda row: row[1])[:top_k]
    return keeping + moving


def _right(
    mode: str,
    predictions: Mapping[str, Sequence[SpanPrediction]],
    golds: Sequence[Sequence[Mapping[str, Any]]],
) -> dict[str, list[bool]]:
    """Per system, whether its answer to item i is right against ``golds[i]`` (False where
    item i has no gold answer)."""
    frame = pd.DataFrame(
        [
            (name, item, p.text, p.start, p.end)
            for name, answered in predictions.items()
            for item, p in enumerate(answered)
            if golds[item]
        ],
        columns=["system", "item", "text", "start", "end"],
    )
    gold = pd.DataFrame(
        [(item, g["text"], g["start"], g["end"]) for item, gs in enumerate(golds) for g in gs],
        columns=["item", "text", "start", "end"],
    )
    right = {name: [False] * len(golds) for name in predictions}
    if not frame.empty:
        scores = answer_scores(frame, gold, mode=mode)
        for name, item, correct in scores[["system", "item", "correct"]].itertuples(index=False):
            right[name][item] = bool(correct)
    return right
