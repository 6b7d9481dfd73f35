"""A span task (QA-SRL) beside the label cast: the same people, a task of the other type.

``build_span_cast`` gives a shared task "qasrl" of type span extraction with its phases, a
builder and a breaker team, and a starter and a blind-dev set of QA-SRL items written here
(sentences of fixtures/qasrl), each with its gold answers as character offsets.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model

from bibi.sharedtasks import services
from bibi.sharedtasks.models import Dataset, Example, SharedTask
from bibi.sharedtasks.spans import answer_locate

from .conftest import Cast, phases_around_now

UCD = (
    "UCD finished the 2006 championship as Dublin champions , by beating St Vincents in the final ."
)
SAID = "He said that he would return , and he did ."
# (id, sentence, question, predicate index, verb, answer texts)
SPAN_STARTER = [
    ("s1", UCD, "who beat someone?", 10, "beating", ["UCD"]),
    ("s2", UCD, "what did someone finish?", 1, "finished", ["the 2006 championship"]),
    ("s3", SAID, "what did someone say?", 1, "said", ["that he would return", "he would return"]),
]
SPAN_BLIND_DEV = [
    ("d1", UCD, "who was beaten?", 10, "beating", ["St Vincents"]),
    ("d2", SAID, "who said something?", 1, "said", ["He"]),
]


def answers_of(sentence: str, texts: list[str]) -> list[dict[str, Any]]:
    found = [answer_locate(sentence, text) for text in texts]
    assert all(found), f"{texts} are not all spans of {sentence!r}"
    return [answer for answer in found if answer is not None]


def _span_dataset(shared_task: SharedTask, split: str, rows: list[tuple]) -> Dataset:
    dataset = services.dataset_get_or_create(shared_task=shared_task, split=split)
    Example.objects.bulk_create(
        Example(
            dataset=dataset,
            external_id=eid,
            text=text,
            label="",
            question=question,
            predicate_index=index,
            predicate=verb,
            answers=answers_of(text, answers),
            position=i,
        )
        for i, (eid, text, question, index, verb, answers) in enumerate(rows)
    )
    return dataset


def build_span_cast(*, current_phase: str = "break", answer_mode: str = "token_f1") -> Cast:
    users = get_user_model().objects
    organizer = users.create_user("olga", password="pw-olga-123")
    other_organizer = users.create_user("otto", password="pw-otto-123")
    builder = users.create_user("bea", password="pw-bea-123")
    breaker = users.create_user("brian", password="pw-brian-123")
    outsider = users.create_user("oscar", password="pw-oscar-123")
    shared_task = services.shared_task_create(
        creator=organizer,
        name="QA-SRL",
        slug="qasrl",
        task_type=SharedTask.TaskType.SPAN_EXTRACTION,
        answer_mode=answer_mode,
    )
    other_task = services.shared_task_create(
        creator=other_organizer, name="Other task", slug="other"
    )
    phases_around_now(shared_task, organizer, current=current_phase)
    return Cast(
        shared_task=shared_task,
        other_task=other_task,
        organizer=organizer,
        other_organizer=other_organizer,
        builder=builder,
        breaker=breaker,
        outsider=outsider,
        builder_team=services.team_create(
            shared_task=shared_task, owner=builder, kind="builder", name="Strawman"
        ),
        breaker_team=services.team_create(
            shared_task=shared_task, owner=breaker, kind="breaker", name="Utrecht"
        ),
        starter=_span_dataset(shared_task, "starter", SPAN_STARTER),
        blind_dev=_span_dataset(shared_task, "blind_dev", SPAN_BLIND_DEV),
        train=services.dataset_get_or_create(shared_task=shared_task, split="train"),
    )
