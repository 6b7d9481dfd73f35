"""Label validation of a sentence-pair (NLI) task: validators read both texts of each item,
blind as in a label task, and the votes settle the pair as they settle a label pair."""

from __future__ import annotations

import pytest

from bibi.pairs import services as pair_services
from bibi.pairs.validation import pair_validations
from bibi.sharedtasks import services as task_services
from bibi.tasktypes import SENTENCE_PAIRS
from bibi.tasktypes.rules import PairInput

from ...conftest import build_cast
from ..conftest import start_contests
from .conftest import invited_validator, validation_on, votes_on

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]

PREMISE = "Two women are petting a small kangaroo."
HYPOTHESIS = "Two women are petting a kangaroo."


def nli_starter(task):
    dataset = task_services.dataset_get_or_create(shared_task=task, split="starter")
    dataset.examples.create(
        external_id="k1", text=PREMISE, text_b=HYPOTHESIS, label="entailment", position=0
    )
    blind = task_services.dataset_get_or_create(shared_task=task, split="blind_dev")
    train = task_services.dataset_get_or_create(shared_task=task, split="train")
    return dataset, blind, train


@pytest.fixture
def nli_pair(db):
    cast = build_cast(
        current_phase="break",
        name="NLI",
        slug="nli",
        task_type=SENTENCE_PAIRS.key,
        datasets=nli_starter,
    )
    pair_services.pair_set_submit(
        team=cast.breaker_team,
        user=cast.breaker,
        pairs=[
            PairInput(
                row=1,
                original_id="k1",
                variant_text_b="Two men are petting a kangaroo.",
                variant_label="contradiction",
                rationale="The premise says women.",
            )
        ],
    )
    start_contests(cast.shared_task)
    validation_on(cast.shared_task, cast.organizer)
    return cast


def test_a_validator_reads_both_texts_and_never_the_claimed_label(nli_pair):
    cast = nli_pair
    validator = invited_validator(cast)
    client = cast.client("organizer")
    client.force_authenticate(validator)
    item = client.post("/api/v1/shared-tasks/nli/validation/next/").json()
    assert (item["original_text"], item["original_text_b"]) == (PREMISE, HYPOTHESIS)
    assert (item["variant_text"], item["variant_text_b"]) == (
        PREMISE,
        "Two men are petting a kangaroo.",
    )
    assert item["labels"] == ["entailment", "neutral", "contradiction"]
    assert "contradiction" not in {item.get("variant_label"), item.get("claimed_label")}
    assert "The premise says women." not in str(item)

    page = cast.client("anonymous")
    page.force_login(validator)
    html = page.get("/tasks/nli/validate/").content.decode()
    assert "Two men are petting a kangaroo." in html and "Hypothesis" in html


def test_votes_relabel_a_sentence_pair_as_they_relabel_a_label_pair(nli_pair):
    cast = nli_pair
    pair = cast.shared_task.pair_sets.get().pairs.get()
    validators = [invited_validator(cast, name) for name in ("vera", "vick", "vale")]
    votes_on(pair, validators, ["neutral", "neutral", "contradiction"], cast.shared_task)
    state = pair_validations(shared_task=cast.shared_task)[pair.id]
    assert (state.state, state.scored_label) == ("relabelled", "neutral")
