"""The pair editor's system checks and suggestions on a span task (QA-SRL): the draft check
asked with the answer the breaker picked (or none: the guidance service moves the gold answers
when the edit leaves them alone, and claims nothing otherwise), each system's answer boxed in
both sentences, and the form filled again from a check's answer: the pair editor's span parts
(``bibi.web.kinds.PAGE_KINDS``). The shapes are the guidance service's
(``bibi.guidance.span_guidance``)."""

from __future__ import annotations

from typing import Any

from bibi.guidance.jobs import JobRecord
from bibi.guidance.suggest import SuggestRequest
from bibi.sharedtasks.models import Example
from bibi.texts import normalize_text
from bibi.web.answer_marks import answer_marks

MOVES_THE_ANSWER = (
    "This suggested edit is meant to move the answer, and nobody has checked where the answer "
    "is now: select the variant's answer (or type it) before checking or adding the pair."
)


def span_draft_request(example: Example, cleaned: dict[str, Any]) -> SuggestRequest:
    """The draft check of the editor's span form: the variant and its picked answer, if any
    (``SpanAnswerForm`` leaves "" for none)."""
    answers = cleaned.get("variant_answers") or None
    return SuggestRequest(
        original_id=example.external_id,
        variant_text=cleaned["variant_text"],
        variant_answers=tuple(answers) if answers else None,
    )


def span_machine_problems(cleaned: dict[str, Any]) -> dict[str, str]:
    """``span_machine_problem`` beside the field it is about ({} when none)."""
    problem = span_machine_problem(cleaned)
    return {"variant_answer": problem} if problem else {}


def span_machine_problem(cleaned: dict[str, Any]) -> str | None:
    """Why a pair cannot be checked or added as it stands: the variant is still an
    answer-moving suggestion's text (the form's ``machine_text``) and no answer was given, so
    the original's answers would be looked for in a sentence meant to have another one."""
    machine = normalize_text(cleaned.get("machine_text") or "")
    if machine and machine == cleaned.get("variant_text") and not cleaned.get("variant_answers"):
        return MOVES_THE_ANSWER
    return None


def span_check_context(check: dict[str, Any]) -> dict[str, Any]:
    """What the page's span draft check draws from (``span_check``)."""
    return {"span_check": span_check_view(check)}


def span_check_view(check: dict[str, Any]) -> dict[str, Any]:
    """A span draft check as the page draws it: the variant with its gold answers boxed
    (when known) and each system's answer boxed in the original and in the variant."""
    original, variant = check["original"]["text"], check["variant_text"]
    return {
        "variant_pieces": answer_marks(variant, check["variant_answers"] or []),
        "outcomes": [
            {
                **outcome,
                "original_pieces": answer_marks(original, [outcome["original"]]),
                "variant_pieces": answer_marks(variant, [outcome["variant"]]),
            }
            for outcome in check["outcomes"]
        ],
    }


def span_answer_initial(check: dict[str, Any]) -> dict[str, Any]:
    """The editor's answer fields again for a check the breaker gave one answer to (a job
    followed by its page keeps the variant, not the form)."""
    answers = check.get("variant_answers") or []
    if check.get("answers_from") != "given" or len(answers) != 1:
        return {}
    [answer] = answers
    return {
        "variant_answer": answer["text"],
        "answer_start": answer["start"],
        "answer_end": answer["end"],
    }


def span_refill(record: JobRecord, check: dict[str, Any] | None) -> dict[str, Any]:
    """The editor's fields again for a followed job: the answer a check was given."""
    return span_answer_initial(check) if check else {}
