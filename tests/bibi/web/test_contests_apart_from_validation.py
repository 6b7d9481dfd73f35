"""Contest and validation stay apart (issue 31, point 2): while label validation is open, a
breaker who may still be asked to label a pair blind never reads the label its team claimed,
on the contest page, in the contest API, in the pair's detail or on the contest form; the
pair comes back once its votes are in."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from bibi.pairs import services as pair_services
from bibi.pairs.models import Pair

from .validation_scene import (
    QUEUE,
    ValidationScene,
    build_validation_scene,
    handed,
    label_all,
    signed_in,
)

PAGE = "/tasks/sst/contests/pairs/"
API = "/api/v1/shared-tasks/sst/contestable-pairs/"


@pytest.fixture
def scene(db) -> ValidationScene:
    return build_validation_scene()


def utrecht_pairs(scene: ValidationScene) -> list[Pair]:
    return list(Pair.objects.filter(pair_set=scene.utrecht_entry).order_by("row"))


def test_a_validator_in_waiting_reads_no_claimed_label_of_a_pair_it_may_validate(scene):
    dora = signed_in(scene.dora)  # Delft's member: she may be handed any of Utrecht's pairs
    pairs = utrecht_pairs(scene)

    page = dora.get(PAGE)
    assert page.status_code == 200
    html = page.content.decode()
    for pair in pairs:
        assert pair.variant_text.replace('"', "&quot;") not in html
        assert pair.variant_text not in html
    assert 'id="held-for-validation"' in html
    assert f"{len(pairs)} pairs of the other teams are not shown" in html

    listed = dora.get(API).json()
    assert listed["results"] == []
    assert listed["held_for_validation"] == len(pairs)

    for pair in pairs:
        assert dora.get(f"/api/v1/pairs/{pair.id}/").status_code == 404
        assert dora.get(f"{PAGE}{pair.id}/").status_code == 404
        refused = dora.post(f"/api/v1/pairs/{pair.id}/contests/", {"reason": "wrong"})
        assert refused.status_code == 404
    with pytest.raises(ValidationError, match="waits for validators' votes"):
        pair_services.contest_create(pair=pairs[0], user=scene.dora, reason="wrong")


def test_a_pair_comes_back_to_the_contest_page_once_its_votes_are_in(scene):
    # The organizer and the invited validator give every pair its two votes.
    for user in (scene.cast.organizer, scene.val):
        label_all(signed_in(user), user, lambda pair: {"label": pair.variant_label})
    dora = signed_in(scene.dora)
    html = dora.get(PAGE).content.decode()
    assert 'id="held-for-validation"' not in html
    listed = dora.get(API).json()
    assert listed["held_for_validation"] == 0
    shown = {row["id"]: row for row in listed["results"]}
    for pair in utrecht_pairs(scene):
        assert shown[pair.id]["variant_label"] == pair.variant_label
        assert dora.get(f"/api/v1/pairs/{pair.id}/").status_code == 200


def test_a_team_that_validates_nothing_reads_the_pairs_as_before(scene):
    """Validation off: no pair waits for votes, nothing is held back."""
    scene.cast.shared_task.validation_mode = "off"
    scene.cast.shared_task.save(update_fields=["validation_mode"])
    listed = signed_in(scene.dora).get(API).json()
    assert listed["held_for_validation"] == 0
    assert {row["id"] for row in listed["results"]} == {p.id for p in utrecht_pairs(scene)}


def test_a_pair_the_team_has_voted_on_is_no_longer_held(scene):
    """One vote per team and pair: once Dora has labelled a pair, no member of Delft is
    handed it again, so its label may be read (and contested)."""
    dora = signed_in(scene.dora)
    assert dora.post(f"{QUEUE}next/").status_code == 302
    item = handed(scene.dora)
    assert item is not None and item.pair.pair_set_id == scene.utrecht_entry.id
    assert dora.post(f"{QUEUE}{item.id}/", {"label": "negative"}).status_code == 302
    listed = dora.get(API).json()
    assert [row["id"] for row in listed["results"]] == [item.pair_id]
    assert listed["held_for_validation"] == len(utrecht_pairs(scene)) - 1
    assert dora.get(f"{PAGE}{item.pair_id}/").status_code == 200
