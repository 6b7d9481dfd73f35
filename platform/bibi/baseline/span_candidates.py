"""The baseline breaker's candidate pairs on a span task (QA-SRL): edits of the sentence,
never of the question, each with the variant's answers and verified by every hosted QA
system's forward pass (``fim_engine.span_suggest``).

| edit | where | the variant's answers | stored |
|---|---|---|---|
| ``synonym``, ``name``, ``typo`` | outside every gold answer | the gold answers moved by the edit (``fim_engine.answers_after``): the same words | verified by construction |
| the same sources | inside a gold answer | the answer stretched over the edit (``fim_engine.answers_stretched``): a guess | ``label_unverified`` |

Antonyms and negation are not made on span tasks: they change what the sentence says about
the predicate, so the question may have no answer in the variant, and no span can be guessed.
Typos only touch the guide's ``TYPO_WORDS`` highest-leverage words, as on label tasks. A
system is broken by a pair when it is right on exactly one of its two items (``scoring``'s
break rule, with the task's answer mode); for an answer-moving pair that is against the
guessed answer, which is why it counts only once validated.

Loads models: never imported by the web process.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from django.core.exceptions import ValidationError

import fim_engine
import scoring
from bibi.baseline.candidates import TYPO_WORDS, Candidate, Hosted, by_guide, levered_words
from bibi.guidance.ranking import RankedOriginal
from bibi.sharedtasks.models import SharedTask
from bibi.systems.errors import ValidationFailed
from bibi.systems.runner import model_call
from bibi.texts import normalize_text
from edits.claims import TYPO
from edits.perturbations import Perturbation
from edits.wordnet import load_wordnet
from fim_engine.span_suggestions import SpanSuggestion


class Judge(NamedTuple):
    """When an answer is right: the task's answer mode and token-F1 threshold."""

    mode: str
    threshold: float


# Edits kept per original: the answer-keeping and the answer-moving ones with most leverage.
SPAN_PER_KIND = 4


def span_candidates_make(
    ranked: Sequence[RankedOriginal],
    hosted: Sequence[Hosted],
    *,
    shared_task: SharedTask,
    seed: int,
) -> list[Candidate]:
    """Every kept edit of every original, with its variant's answers and the systems it breaks
    (``broken``), in a fixed order."""
    wordnet = load_wordnet()
    systems = {entry.key: entry.system for entry in hosted}
    names = {entry.key: entry.name for entry in hosted}
    judge = Judge(shared_task.answer_mode, shared_task.answer_f1_threshold)
    candidates = []
    for guide, group in by_guide(ranked, hosted):
        examples = [entry.example for entry in group]
        ordered = {guide: systems[guide], **systems}  # the guide first
        try:
            fishers = model_call(
                systems[guide].fisher, [e.question for e in examples], [e.text for e in examples]
            )
            for entry, fisher in zip(group, fishers, strict=True):
                example = entry.example
                verb = fim_engine.predicate_span(
                    example.text, example.predicate_index, example.predicate
                )
                made = _edits(example.text, fisher, wordnet, seed, [verb] if verb else [])
                suggestions = model_call(
                    fim_engine.span_suggest,
                    ordered,
                    example.question,
                    example.text,
                    example.answers,
                    made,
                    top_k=SPAN_PER_KIND,
                    fisher=fisher,
                    mode=judge.mode,
                    threshold=judge.threshold,
                )
                guessed = _guessed(example.answers, suggestions, judge)
                candidates += [
                    _candidate(entry, suggestion, names, guessed.get(index))
                    for index, suggestion in enumerate(suggestions)
                ]
        except ValidationFailed as failure:
            raise ValidationError(
                f"A model failed while edits were suggested: {failure.detail}"
            ) from None
    return candidates


def _edits(
    sentence: str,
    fisher: fim_engine.SpanFisherResult,
    wordnet: object,
    seed: int,
    protect: list[tuple[int, int]],
) -> list[Perturbation]:
    """The sentence's edits meant to keep the answer where it lies outside it (antonyms and
    negation left out; never the predicate), typos in the guide's most levered content words
    only, and only
    edits whose text the pair checks keep as it is (the answers' offsets hold)."""
    levered = levered_words(fisher.leverage, TYPO_WORDS)
    return [
        p
        for p in fim_engine.span_perturbations(
            sentence, wordnet=wordnet, seed=seed, protect=protect
        )
        if p.keeps_label
        and (p.source != TYPO or (None, p.edit.original.lower()) in levered)
        and normalize_text(p.text) == p.text
    ]


# An answer-moving suggestion's guessed answers, and whether each system is right on them.
Guess = tuple[list[dict[str, Any]], list[bool]]


def _guessed(
    answers: list[dict[str, Any]], suggestions: Sequence[SpanSuggestion], judge: Judge
) -> dict[int, Guess]:
    """Each answer-moving suggestion's (by index) gold answers stretched over its edit
    (``fim_engine.answers_stretched``) and every system judged against them, in its outcomes'
    order: one ``answers_right`` call for all of them (each call costs tens of ms)."""
    moving = [index for index, s in enumerate(suggestions) if not s.keeps_answer]
    if not moving:
        return {}
    stretched = [
        fim_engine.answers_stretched(suggestions[i].edit, answers, suggestions[i].text)
        for i in moving
    ]
    systems = [o.system for o in suggestions[moving[0]].outcomes]
    variants: dict[str, list[fim_engine.SpanPrediction]] = {name: [] for name in systems}
    for index in moving:
        for outcome in suggestions[index].outcomes:
            variants[outcome.system].append(outcome.variant)
    judged = fim_engine.answers_right(
        variants, stretched, mode=judge.mode, threshold=judge.threshold
    )
    return {
        index: (stretched[k], [judged[o.system][k] for o in suggestions[index].outcomes])
        for k, index in enumerate(moving)
    }


def _candidate(
    entry: RankedOriginal,
    suggestion: SpanSuggestion,
    names: dict[str, str],
    guess: Guess | None,
) -> Candidate:
    """The suggestion as a candidate pair; ``guess`` (``_guessed``) for an answer-moving one."""
    perturbation = Perturbation(
        suggestion.text, suggestion.edit, suggestion.source, True, suggestion.rationale
    )
    outcomes = suggestion.outcomes
    if guess is None:
        answers = list(suggestion.answers)
        right_after = [bool(o.right_after) for o in outcomes]
    else:
        answers, right_after = guess
    broken = tuple(
        names[o.system]
        for o, after in zip(outcomes, right_after, strict=True)
        if scoring.break_rule(o.right_before, after)
    )
    return Candidate(
        entry,
        perturbation,
        "",
        projection=suggestion.leverage,
        broken=broken,
        answers=answers,
        moves_answer=not suggestion.keeps_answer,
    )
