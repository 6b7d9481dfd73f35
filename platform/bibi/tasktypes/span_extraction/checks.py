"""The minimal-pair rules of a span task (QA-SRL), on top of ``bibi.tasktypes.rules``.

A span pair is a starter item (a sentence and a question about it, with gold answers) and a
variant of its sentence, with the variant's answers. Breakers change the sentence (and the
answer where appropriate), never the question. So a span pair is refused when, besides what
the shared rules refuse of any pair's variant, rationale, tags and edit (the edit-distance rules
apply to the sentence):

- the original is not a starter item: found by id, or by its sentence and question (a
  sentence has several questions, so a sentence alone names none);
- a given question is not the original's (compared after ``normalize_text``): the question
  is the same on both sides;
- the variant's answers are not spans of the variant sentence (each refused with its
  reason), or are more than ``SPAN_PAIR_MAX_ANSWERS`` (20);
- the pair carries a label (``variant_label`` or ``original_label``): a span pair has none. Without answers, the original's answers are looked for in the variant, and each
  one that is no longer there is named: the breaker then says what the answer became.

Labels play no part: a span pair stores the question and both items' answers
(``CheckedPair.fields``) and '' for labels. A machine-made pair (``PairInput.label_unverified``:
the baseline breaker's edit inside an answer, with the answer stretched over it) is stored
*label unverified* only when its answer texts are not the original's: the rule of a label
pair (``edits.claims.pair_unverified``), with the answers in the place of the label. An edit
that keeps the answers claims nothing about them that the original's gold does not, so
nothing is left to verify.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bibi.tasktypes.rules import (
    CheckedPair,
    PairInput,
    PairRules,
    Refusal,
    StarterExample,
    StarterIndex,
    free_text_problems,
    minimal_edit_problems,
    tags_checked,
    variant_problems,
)
from bibi.tasktypes.span_extraction.answers import answer_locate, answers_read
from bibi.tasktypes.tokens import edit_out_of_sight
from bibi.texts import normalize_text
from edits.claims import pair_unverified

# The most answers one span pair's variant may give: a sentence's answers to one question are
# a few spans (QA-SRL's have one to three), and each is located in the sentence.
SPAN_PAIR_MAX_ANSWERS = 20
LABEL_REFUSED = (
    "a span pair has no label: its variant's answers say what the edit changed, so leave "
    "out variant_label and original_label"
)


def starter_key(item: StarterExample) -> tuple[str, str]:
    """A starter item's key: its normalized sentence and question (a sentence alone names
    none: it has several questions)."""
    return (normalize_text(item.text), normalize_text(item.question))


def _original(pair: PairInput, starter: StarterIndex) -> tuple[StarterExample | None, str]:
    original_id = pair.original_id.strip()
    text, question = normalize_text(pair.original_text), normalize_text(pair.question)
    if original_id:
        item = starter.by_id.get(original_id)
        if item is None:
            return None, f"the original id '{original_id[:200]}' is not in the starter set"
        if text and text != normalize_text(item.text):
            return None, (
                f"the original text does not match starter item '{original_id}': "
                f"it is {item.text!r}"
            )
    elif text and question:
        item = starter.by_item.get((text, question))
        if item is None:
            return None, "the original sentence and question are not an item of the starter set"
    else:
        return None, (
            "the pair names no original: give its starter-set id (or its sentence and question)"
        )
    problem = question_problem(pair.question, item)
    return (None, problem) if problem else (item, "")


def question_problem(question: str, item: StarterExample) -> str:
    """Why a given ``question`` is refused for ``item`` ('' when it is none or the item's,
    compared after ``normalize_text``): the question is the same on both sides of a pair."""
    given = normalize_text(question)
    if given and given != normalize_text(item.question):
        return (
            f"the question must stay the original's: it is {item.question!r}, "
            f"not {question.strip()!r}"
        )
    return ""


def variant_answers(
    raw: str, *, variant: str, original: StarterExample
) -> tuple[list[dict[str, Any]], list[str]]:
    """The variant's answers (spans of ``variant``), or the reasons they cannot be taken."""
    if raw.strip():
        answers, problems = answers_read(raw, variant, max_answers=SPAN_PAIR_MAX_ANSWERS)
        return answers, [f"{problem} (the variant sentence)" for problem in problems]
    found = [answer_locate(variant, answer["text"]) for answer in original.answers]
    lost = [a["text"] for a, (f, why) in zip(original.answers, found, strict=True) if f is None]
    if lost:
        named = ", ".join(repr(text) for text in lost)
        twice = any(f is None and "occurs" in why for f, why in found)
        return [], [
            f"the original's answer {named} "
            + ("occurs more than once in" if twice else "is not in")
            + " the variant sentence: give the variant's answers"
        ]
    return [answer for answer, _ in found if answer is not None], []


def answer_texts(answers: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """The texts of ``answers``, in order: what a span item claims, as a label claims a class."""
    return tuple(str(answer["text"]) for answer in answers)


def check_span_pair(
    pair: PairInput, *, starter: StarterIndex, rules: PairRules
) -> tuple[CheckedPair | None, list[str]]:
    """One span pair on its own: the checked pair, or None and every reason why not."""
    original, problem = _original(pair, starter)
    problems = [problem] if problem else []
    variant = normalize_text(pair.variant_text)
    problems += variant_problems(variant, rules)
    rationale = pair.rationale.strip()
    problems += free_text_problems(rationale, pair.source_id, rules)
    tags, tag_problems = tags_checked(pair.tags, rules)
    problems += tag_problems
    if pair.variant_label.strip() or pair.original_label.strip():
        problems.append(Refusal(LABEL_REFUSED, kind="label"))
    if original is None or not variant:
        return None, problems
    distance, edit_problems = minimal_edit_problems(
        normalize_text(original.text), variant, rules=rules
    )
    answers, answer_problems = variant_answers(
        pair.variant_answers, variant=variant, original=original
    )
    problems += edit_problems + answer_problems
    if problems:
        return None, problems
    out_of_sight = edit_out_of_sight(
        original.text, variant, max_sequence_length=rules.max_sequence_length
    )
    return (
        CheckedPair(
            row=pair.row,
            source_id=pair.source_id.strip(),
            original=original,
            variant_text=variant,
            variant_label="",
            rationale=rationale,
            tags=tags,
            edit_distance=distance,
            warnings=(out_of_sight,) if out_of_sight else (),
            # A machine-made answer (the baseline breaker's edit inside an answer): unverified
            # when it is not the original's (edits.claims; the label checks' rule too).
            label_unverified=pair_unverified(
                machine_made=pair.label_unverified,
                original=answer_texts(original.answers),
                variant=answer_texts(answers),
            ),
            fields={
                "question": original.question,
                "original_answers": original.answers,
                "variant_answers": answers,
            },
        ),
        [],
    )
