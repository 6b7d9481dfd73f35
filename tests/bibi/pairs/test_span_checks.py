"""Span pairs (QA-SRL): the question stays the original's, the variant's answers are spans of
the variant sentence, the edit rules apply to the sentence; files and the JSON API carry the
question and the answers."""

from __future__ import annotations

import dataclasses

import pytest
from django.core.files.base import ContentFile

from bibi.pairs import services
from bibi.pairs.models import Pair
from bibi.tasktypes.rules import PairInput

from ..spancast import SAID, UCD, build_span_cast

pytestmark = pytest.mark.django_db

KILMACUD = UCD.replace("UCD", "Kilmacud")


@pytest.fixture
def cast(db):
    return build_span_cast(current_phase="break")


def span_pair(**fields) -> PairInput:
    """A span pair has no label."""
    return PairInput(variant_label="", **fields)


def submit(cast, *pairs: PairInput):
    return services.pair_set_submit(team=cast.breaker_team, user=cast.breaker, pairs=list(pairs))


def refusal(cast, *pairs: PairInput) -> list[tuple[int, str]]:
    with pytest.raises(services.PairSetRejected) as raised:
        submit(cast, *pairs)
    return [(error.line, error.reason) for error in raised.value.errors]


def test_a_span_pair_stores_the_question_and_both_items_answers(cast):
    submit(
        cast,
        span_pair(row=1, original_id="s1", variant_text=KILMACUD, variant_answers="Kilmacud"),
    )
    pair = Pair.objects.get()
    assert pair.question == "who beat someone?"
    assert pair.original_answers == [{"start": 0, "end": 3, "text": "UCD"}]
    assert pair.variant_answers == [{"start": 0, "end": 8, "text": "Kilmacud"}]
    assert (pair.original_label, pair.variant_label, pair.edit_distance) == ("", "", 1)


def test_without_answers_the_originals_are_found_in_the_variant(cast):
    variant = SAID.replace("He said", "She said")
    submit(cast, span_pair(row=1, original_id="s3", variant_text=variant))
    texts = [answer["text"] for answer in Pair.objects.get().variant_answers]
    assert texts == ["that he would return", "he would return"]


def test_it_refuses_a_changed_question(cast):
    errors = refusal(
        cast,
        span_pair(
            row=1,
            original_id="s1",
            question="who was beaten?",
            variant_text=KILMACUD,
            variant_answers="Kilmacud",
        ),
    )
    assert errors == [
        (
            1,
            "the question must stay the original's: it is 'who beat someone?', not 'who was beaten?'",
        )
    ]


def test_it_refuses_answers_that_are_not_spans_of_the_variant(cast):
    errors = refusal(
        cast,
        span_pair(row=1, original_id="s1", variant_text=KILMACUD, variant_answers="UCD"),
        span_pair(row=2, original_id="s1", variant_text=KILMACUD.replace("final", "replay")),
    )
    assert errors == [
        (1, "the answer 'UCD' is not a span of the sentence (the variant sentence)"),
        (
            2,
            "the original's answer 'UCD' is not in the variant sentence: give the variant's "
            "answers",
        ),
    ]


def test_the_edit_rules_apply_to_the_sentence(cast):
    errors = refusal(
        cast,
        span_pair(row=1, original_id="s1", variant_text=UCD, variant_answers="UCD"),
        span_pair(
            row=2,
            original_id="s1",
            variant_text="UCD won nothing at all that year , sadly for everyone involved here .",
            variant_answers="UCD",
        ),
    )
    reasons = dict(errors)
    assert reasons[1] == "the variant is identical to the original"
    assert "token edits away from the original" in reasons[2]


def test_an_original_is_named_by_id_or_by_sentence_and_question(cast):
    submit(
        cast,
        span_pair(
            row=1,
            original_text=UCD,
            question="what did someone finish?",
            variant_text=UCD.replace("2006", "2007"),
            variant_answers='[{"start": 13, "end": 34}]',
        ),
    )
    pair = Pair.objects.get()
    assert pair.original.external_id == "s2"
    assert pair.variant_answers[0]["text"] == "the 2007 championship"
    errors = refusal(cast, span_pair(row=1, original_text=UCD, variant_text=KILMACUD))
    assert errors == [
        (1, "the pair names no original: give its starter-set id (or its sentence and question)")
    ]


def test_the_same_variant_and_question_twice_is_refused(cast):
    pair = span_pair(row=1, original_id="s1", variant_text=KILMACUD, variant_answers="Kilmacud")
    errors = refusal(cast, pair, dataclasses.replace(pair, row=2))
    assert errors == [(2, "the same variant and question as row 1")]


def test_a_span_pairs_file_carries_the_question_and_answers(cast):
    data = (
        "original_id,question,variant_text,variant_answers\n"
        f's1,who beat someone?,"{KILMACUD}",Kilmacud\n'
    ).encode()
    submission = services.pair_set_upload(
        team=cast.breaker_team, user=cast.breaker, file=ContentFile(data, name="pairs.csv")
    )
    assert submission.pair_set.layout == "span_pairs"
    assert Pair.objects.get().variant_answers[0]["text"] == "Kilmacud"


def test_a_label_layout_is_refused_in_a_span_task(cast):
    data = f'original_id,variant_text,variant_label\ns1,"{KILMACUD}",positive\n'.encode()
    with pytest.raises(services.PairSetRejected) as raised:
        services.pair_set_upload(
            team=cast.breaker_team, user=cast.breaker, file=ContentFile(data, name="pairs.csv")
        )
    assert "this is a span task" in str(raised.value.errors[0])


def test_the_json_api_takes_span_pairs_and_shows_their_answers(cast):
    client = cast.client("breaker")
    answer = client.post(
        "/api/v1/shared-tasks/qasrl/pair-sets/",
        {
            "pairs": [
                {"original_id": "s1", "variant_text": KILMACUD, "variant_answers": ["Kilmacud"]}
            ]
        },
        format="json",
    )
    assert answer.status_code == 201, answer.json()
    shown = client.get(f"/api/v1/pair-sets/{answer.json()['id']}/").json()["pairs"][0]
    assert shown["question"] == "who beat someone?"
    assert shown["variant_answers"] == [{"start": 0, "end": 8, "text": "Kilmacud"}]


def test_a_draft_takes_span_pairs_one_by_one_and_refuses_a_repeat(cast):
    pair = span_pair(row=0, original_id="s1", variant_text=KILMACUD, variant_answers="Kilmacud")
    stored = services.pair_add(team=cast.breaker_team, user=cast.breaker, pair=pair)
    assert (stored.row, stored.question) == (1, "who beat someone?")
    with pytest.raises(services.PairSetRejected) as raised:
        services.pair_add(team=cast.breaker_team, user=cast.breaker, pair=pair)
    assert str(raised.value.errors[0]) == "line 2: the same variant and question as row 1"


def test_the_examples_api_shows_span_items_and_hides_blind_dev_answers(cast):
    starter = cast.client("breaker").get("/api/v1/shared-tasks/qasrl/datasets/starter/examples/")
    assert starter.status_code == 200, starter.json()
    first = starter.json()["results"][0]
    assert first["question"] == "who beat someone?"
    assert first["answers"] == [{"start": 0, "end": 3, "text": "UCD"}]
    blind = cast.client("builder").get("/api/v1/shared-tasks/qasrl/datasets/blind_dev/examples/")
    assert blind.status_code == 200, blind.json()
    row = blind.json()["results"][0]
    assert row["question"] == "who was beaten?" and "answers" not in row


def test_a_span_pair_is_refused_with_a_label(cast):
    pair = span_pair(row=1, original_id="s1", variant_text=KILMACUD, variant_answers="Kilmacud")
    labelled = dataclasses.replace(pair, variant_label="positive")
    ((line, reason),) = refusal(cast, labelled)
    assert line == 1
    assert "a span pair has no label" in reason
    # The JSON API and a file say so too, and store nothing.
    answer = cast.client("breaker").post(
        "/api/v1/shared-tasks/qasrl/pair-sets/",
        {
            "pairs": [
                {
                    "original_id": "s1",
                    "variant_text": KILMACUD,
                    "variant_answers": ["Kilmacud"],
                    "variant_label": "positive",
                }
            ]
        },
        format="json",
    )
    assert answer.status_code == 400
    assert "variant_label" in str(answer.json())
    data = (
        "original_id,variant_text,variant_answers,variant_label\n"
        f's1,"{KILMACUD}",Kilmacud,positive\n'
    ).encode()
    with pytest.raises(services.PairSetRejected) as raised:
        services.pair_set_upload(
            team=cast.breaker_team, user=cast.breaker, file=ContentFile(data, name="pairs.csv")
        )
    assert "variant_label" in str(raised.value.errors[0])
    assert not Pair.objects.exists()


def test_a_span_pair_takes_at_most_the_documented_number_of_answers(cast):
    from bibi.tasktypes.span_extraction.checks import SPAN_PAIR_MAX_ANSWERS

    many = " ### ".join(["Kilmacud"] * (SPAN_PAIR_MAX_ANSWERS + 1))
    ((line, reason),) = refusal(
        cast, span_pair(row=1, original_id="s1", variant_text=KILMACUD, variant_answers=many)
    )
    assert line == 1
    assert f"{SPAN_PAIR_MAX_ANSWERS + 1} answers" in reason
    assert f"at most {SPAN_PAIR_MAX_ANSWERS}" in reason
    answers = [{"start": 0, "end": 8}] * 10_000
    answer = cast.client("breaker").post(
        "/api/v1/shared-tasks/qasrl/pair-sets/",
        {"pairs": [{"original_id": "s1", "variant_text": KILMACUD, "variant_answers": answers}]},
        format="json",
    )
    assert answer.status_code == 400
    assert f"at most {SPAN_PAIR_MAX_ANSWERS}" in str(answer.json())


def test_the_single_pair_api_refuses_a_span_pair_with_a_label(cast):
    answer = cast.client("breaker").post(
        "/api/v1/shared-tasks/qasrl/pairs/",
        {
            "original_id": "s1",
            "variant_text": KILMACUD,
            "variant_answers": "Kilmacud",
            "variant_label": "positive",
        },
        format="json",
    )
    assert answer.status_code == 400
    assert "variant_label" in str(answer.json())
    assert not Pair.objects.exists()
