"""Edit suggestions for span items (QA-SRL): edits outside the answer, verified by a forward pass.

A breaker of a span task changes the sentence, never the question, and the question must stay
answerable by a span of the new sentence. :func:`span_suggest` takes candidate edits of the
sentence (any :mod:`edits.perturbations` generator's output), ranks them by the guide
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
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd

from edits.claims import TYPO
from edits.perturbations import (
    Edit,
    Perturbation,
    antonym_swaps,
    keyboard_typos,
    name_swaps,
    negation_edits,
    synonym_swaps,
)
from edits.wordnet import WordNet
from fim_engine.span_model import SpanPrediction, SpanSystem
from fim_engine.spans import SpanFisherResult
from scoring.answers import DEFAULT_F1_THRESHOLD, answer_scores, normalize_answer


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

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON: the edit and every system's outcome (``outcomes`` keyed by system)."""
        return {
            "text": self.text,
            "edit": asdict(self.edit),
            "source": self.source,
            "rationale": self.rationale,
            "keeps_answer": self.keeps_answer,
            "answers": list(self.answers),
            "leverage": self.leverage,
            "outcomes": {o.system: outcome_dict(o) for o in self.outcomes},
        }

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


def outcome_dict(outcome: SpanOutcome) -> dict[str, Any]:
    """One system's outcome as plain JSON (answers as ``{"start", "end", "text"}``)."""
    return {
        "original": _answer_dict(outcome.original),
        "variant": _answer_dict(outcome.variant),
        "right_original": outcome.right_before,
        "right_variant": outcome.right_after,
        "changed": normalize_answer(outcome.original.text)
        != normalize_answer(outcome.variant.text),
    }


def _answer_dict(prediction: SpanPrediction) -> dict[str, Any]:
    return {"start": prediction.start, "end": prediction.end, "text": prediction.text}


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
        if _touches(edit, start, end):
            return None
        delta = shift if start >= edit.end else 0
        moved.append({"start": start + delta, "end": end + delta, "text": answer["text"]})
    return moved


def answers_stretched(
    edit: Edit, answers: Sequence[Mapping[str, Any]], variant: str
) -> list[dict[str, Any]]:
    """The gold answers in ``variant`` (``edit`` applied) with the edit taken into each answer
    it touches: a guess at the answer after an edit inside it, which nobody has checked.

    >>> answers_stretched(Edit(4, 8, "2006", "2007 season"),
    ...                   [{"start": 0, "end": 21, "text": "the 2006 championship"}],
    ...                   "the 2007 season championship")[0]["text"]
    'the 2007 season championship'
    """
    shift = len(edit.replacement) - (edit.end - edit.start)
    stretched = []
    for answer in answers:
        start, end = int(answer["start"]), int(answer["end"])
        if _touches(edit, start, end):
            start, end = min(start, edit.start), max(end, edit.end) + shift
        elif start >= edit.end:
            start, end = start + shift, end + shift
        stretched.append({"start": start, "end": end, "text": variant[start:end]})
    return stretched


def _touches(edit: Edit, start: int, end: int) -> bool:
    """Whether ``edit`` replaces a character of ``[start, end)`` or inserts strictly inside."""
    if edit.start == edit.end:
        return start < edit.start < end
    return edit.start < end and start < edit.end


def changed_stretch(original: str, variant: str) -> Edit:
    """The one stretch of ``original`` that ``variant`` replaces: what is left once the common
    prefix and suffix are dropped (an insertion when nothing of the original goes).

    >>> changed_stretch("UCD beat them .", "UCD defeated them .")
    Edit(start=4, end=8, original='beat', replacement='defeated')
    """
    prefix = 0
    most = min(len(original), len(variant))
    while prefix < most and original[prefix] == variant[prefix]:
        prefix += 1
    suffix = 0
    while (
        suffix < most - prefix
        and original[len(original) - 1 - suffix] == variant[len(variant) - 1 - suffix]
    ):
        suffix += 1
    end, variant_end = len(original) - suffix, len(variant) - suffix
    return Edit(prefix, end, original[prefix:end], variant[prefix:variant_end])


def span_perturbations(
    sentence: str,
    *,
    wordnet: WordNet | None,
    seed: int = 0,
    protect: Sequence[tuple[int, int]] = (),
) -> list[Perturbation]:
    """Candidate edits of a sentence for :func:`span_suggest`: WordNet synonyms, name swaps
    and one keyboard typo per word (meant to keep the answer when outside it), and WordNet
    antonyms and negation (meant to move it); typos alone without WordNet. No edit touches a
    ``protect``-ed character span (the predicate the question asks about: replacing it leaves
    the question asking about a verb the sentence no longer has)."""
    made = keyboard_typos(sentence, per_word=1, seed=seed)
    if wordnet is not None:
        made = (
            synonym_swaps(sentence, wordnet=wordnet)
            + name_swaps(sentence, wordnet=wordnet)
            + made
            + antonym_swaps(sentence, wordnet=wordnet)
            + negation_edits(sentence)
        )
    return [p for p in made if not any(_touches(p.edit, a, b) for a, b in protect)]


def predicate_span(sentence: str, index: int | None, predicate: str) -> tuple[int, int] | None:
    """The character span of the predicate: token ``index`` of the sentence's space-separated
    tokens (QA-SRL's), when that token is ``predicate`` (ignoring case); else None.

    >>> predicate_span("UCD beat them .", 1, "beat")
    (4, 8)
    """
    if index is None:
        return None
    start = 0
    for position, token in enumerate(sentence.split(" ")):
        if position == index:
            return (start, start + len(token)) if token.lower() == predicate.lower() else None
        start += len(token) + 1
    return None


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
    threshold: float = DEFAULT_F1_THRESHOLD,
    fisher: SpanFisherResult | None = None,
    originals: Mapping[str, SpanPrediction] | None = None,
) -> list[SpanSuggestion]:
    """The ``top_k`` answer-keeping and the ``top_k`` answer-moving edits of ``sentence`` with
    the most guide leverage (fluent ones before typos), each verified by every system's
    forward pass; answer-keeping ones first, each group by leverage.

    The first system of ``systems`` is the guide; ``fisher`` is its span Fisher result on the
    item and ``originals`` every system's answer on ``sentence`` (by name), when the caller
    already has them: each is then not computed again."""
    if not systems:
        raise ValueError("span_suggest needs at least one system")
    before = _answers_on_original(systems, question, sentence, originals)
    if fisher is None:
        guide = next(iter(systems.values()))
        fisher = guide.fisher([question], [sentence])[0]
    words, leverage = [w for w, _ in fisher.leverage], [kl for _, kl in fisher.leverage]
    chosen = _ranked(perturbations, answers, word_spans(sentence, words), leverage, top_k)
    variants = [row[2].text for row in chosen]
    after = {
        name: system.predict([question] * len(variants), variants)
        for name, system in systems.items()
    }
    # One call judges the original (item 0) and every variant: each call costs tens of ms.
    golds = [answers, *(row[3] or [] for row in chosen)]
    answered = {name: [before[name], *after[name]] for name in systems}
    right = answers_right(answered, golds, mode=mode, threshold=threshold)
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
                    right[name][0],
                    right[name][row + 1] if keeps else None,
                )
                for name in systems
            ),
        )
        for row, (keeps, _, perturbation, moved, leverage) in enumerate(chosen)
    ]


def _answers_on_original(
    systems: Mapping[str, SpanSystem],
    question: str,
    sentence: str,
    originals: Mapping[str, SpanPrediction] | None,
) -> dict[str, SpanPrediction]:
    """Each system's answer on the original: ``originals`` when given (for every system and
    no other), else a forward pass of each."""
    if originals is None:
        return {name: system.predict([question], [sentence])[0] for name, system in systems.items()}
    if set(originals) != set(systems):
        raise ValueError("span_suggest needs the original's answer of every system, and no other")
    return dict(originals)


Ranked = tuple[bool, float, Perturbation, list[dict[str, Any]] | None, float]


def _ranked(
    perturbations: Sequence[Perturbation],
    answers: Sequence[Mapping[str, Any]],
    spans: Sequence[tuple[int, int]],
    leverage: Sequence[float],
    top_k: int,
) -> list[Ranked]:
    """``(keeps the answer, −leverage, perturbation, moved answers, leverage)`` of the
    ``top_k`` answer-keeping edits, then of the ``top_k`` others, each fluent edits first
    (typos after them), then by leverage."""
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

    # A keyboard slip is a fair attack but no fluent sentence: fluent edits come first.
    def order(row: Ranked) -> tuple[bool, float]:
        return row[2].source == TYPO, row[1]

    keeping = sorted((row for row in scored if row[0]), key=order)[:top_k]
    moving = sorted((row for row in scored if not row[0]), key=order)[:top_k]
    return keeping + moving


def answers_right(
    predictions: Mapping[str, Sequence[SpanPrediction]],
    golds: Sequence[Sequence[Mapping[str, Any]]],
    *,
    mode: str = "token_f1",
    threshold: float = DEFAULT_F1_THRESHOLD,
) -> dict[str, list[bool]]:
    """Per system, whether its answer to item i is right against ``golds[i]`` by
    :func:`scoring.answers.answer_scores` (False where item i has no gold answer)."""
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
        scores = answer_scores(frame, gold, mode=mode, threshold=threshold)
        for name, item, correct in scores[["system", "item", "correct"]].itertuples(index=False):
            right[name][item] = bool(correct)
    return right


@dataclass(frozen=True)
class SpanDraftCheck:
    """A breaker's draft variant run through every system. ``answers`` are the variant's gold
    answers: those given, else the original's moved by an ``edit`` outside all of them
    (``answers_from`` says which: ``given``, ``moved``); None when unknown, and then nothing
    is claimed right or wrong on the variant."""

    variant: str
    edit: Edit
    answers: tuple[dict[str, Any], ...] | None
    answers_from: str | None
    outcomes: tuple[SpanOutcome, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "edit": asdict(self.edit),
            "answers": None if self.answers is None else list(self.answers),
            "answers_from": self.answers_from,
            "outcomes": {o.system: outcome_dict(o) for o in self.outcomes},
        }


def check_span_variant(
    systems: Mapping[str, SpanSystem],
    question: str,
    sentence: str,
    answers: Sequence[Mapping[str, Any]],
    variant: str,
    variant_answers: Sequence[Mapping[str, Any]] | None = None,
    *,
    mode: str = "token_f1",
    threshold: float = DEFAULT_F1_THRESHOLD,
) -> SpanDraftCheck:
    """Every system's answer on ``sentence`` and on the draft ``variant`` (same question),
    each judged against the gold answers of its item where they are known."""
    if not systems:
        raise ValueError("check_span_variant needs at least one system")
    edit = changed_stretch(sentence, variant)
    gold: list[dict[str, Any]] | None
    source: str | None
    if variant_answers is not None:
        gold, source = [dict(answer) for answer in variant_answers], "given"
    else:
        gold = answers_after(edit, answers)
        source = None if gold is None else "moved"
    predicted = {
        name: system.predict([question, question], [sentence, variant])
        for name, system in systems.items()
    }
    right = answers_right(predicted, [answers, gold or []], mode=mode, threshold=threshold)
    outcomes = tuple(
        SpanOutcome(
            name,
            predicted[name][0],
            predicted[name][1],
            right[name][0],
            right[name][1] if gold is not None else None,
        )
        for name in systems
    )
    return SpanDraftCheck(variant, edit, None if gold is None else tuple(gold), source, outcomes)
