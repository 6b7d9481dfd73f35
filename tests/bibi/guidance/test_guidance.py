"""The boundary ranking and its API, on hosted systems of known geometry."""

from __future__ import annotations

import pytest
from celery.signals import before_task_publish
from django.core.exceptions import ValidationError

from bibi.guidance.kinds import suggestion_claim
from bibi.guidance.ranking import boundary_ranking, guide_order
from bibi.pairs import services as pair_services
from bibi.sharedtasks.models import SharedTask

from ..conftest import BLIND_DEV, ROLES
from ..evaluation.conftest import hosted_version
from ..pairs.conftest import pair_inputs, start_phase_now
from .guidance_conftest import sentiment_bow

pytestmark = pytest.mark.embedded

URL = "/api/v1/shared-tasks/sst/guidance/"
SUGGEST = f"{URL}suggest/"
Visibility = SharedTask.GuidanceVisibility


@pytest.fixture
def sent_tasks():
    """The names of the Celery tasks this process publishes while the test runs."""
    sent: list[str] = []

    def record(sender=None, **_):
        sent.append(sender)

    before_task_publish.connect(record, weak=False)
    yield sent
    before_task_publish.disconnect(record)


def by_id(ranking):
    return {original.example.external_id: original for original in ranking}


def test_an_original_at_the_boundary_ranks_above_a_confident_one(geometry, sent_tasks):
    ranking = boundary_ranking(geometry.shared_task)

    ranked = by_id(ranking)
    assert ranking[0].example.external_id == "on"
    assert ranked["on"].rank < ranked["mild-pos"].rank < ranked["far-pos"].rank
    assert ranked["on"].boundary_score == 1.0
    # Each system ranks the six originals; the boundary score is the mean of their percentiles.
    for original in ranking:
        assert 0.0 <= original.boundary_score <= 1.0
        assert len(original.systems) == 2
        percentiles = [view.percentile for view in original.systems]
        assert original.boundary_score == pytest.approx(sum(percentiles) / 2)
    assert [original.rank for original in ranking] == list(range(1, 7))
    assert ranked["on"].systems[0].confidence < ranked["far-pos"].systems[0].confidence
    # Read from the cells validation stored: nothing is sent to any queue.
    assert sent_tasks == []


def test_strategy_follows_the_boundary_and_maps_to_the_tasks_tags(geometry):
    ranked = by_id(boundary_ranking(geometry.shared_task))

    near, far = ranked["on"], ranked["far-pos"]
    assert near.strategy == "label_preserving" and far.strategy == "label_changing"
    assert near.strategy_tags == ("morphosyntax", "semantics", "world_knowledge")
    assert far.strategy_tags == ("morphosyntax", "semantics", "pragmatics")
    assert "synonym" in near.advice and "negation" in far.advice


def test_words_carry_their_spans_and_the_decisive_word_has_the_most_leverage(geometry):
    original = by_id(boundary_ranking(geometry.shared_task))["mild-pos"]

    text = original.example.text
    assert [word.text for word in original.words] == ["the", "film", "is", "good"]
    assert all(text[word.start : word.end] == word.text for word in original.words)
    assert max(original.words, key=lambda word: word.leverage).text == "good"
    assert sum(word.leverage for word in original.words) == pytest.approx(1.0)


def test_a_system_that_becomes_ready_changes_the_ranking_without_a_gpu_task(
    geometry, tmp_path, sent_tasks
):
    contrarian = sentiment_bow(tmp_path / "contrarian", contrarian=True)
    start_phase_now(geometry.shared_task, "build")
    hosted_version(
        geometry.cast, geometry.melbourne, geometry.melbourne_builder, "contrary", contrarian
    )
    start_phase_now(geometry.shared_task, "break")
    sent_tasks.clear()

    ranking = boundary_ranking(geometry.shared_task)

    assert all(len(original.systems) == 3 for original in ranking)
    # The contrarian disagrees with the two others on every original.
    assert all(original.disagreements == 1 for original in ranking)
    assert all(original.strategy == "label_preserving" for original in ranking)
    assert sent_tasks == []


def test_filters_and_orders(geometry):
    task = geometry.shared_task
    one = boundary_ranking(task, system_ids=[geometry.melbourne_bow.id])
    assert all(len(original.systems) == 1 for original in one)

    negatives = boundary_ranking(task, label="negative")
    assert {o.example.label for o in negatives} == {"negative"}
    # Ranks stay those of the whole starter set.
    whole = by_id(boundary_ranking(task))
    assert [o.rank for o in negatives] == sorted(
        whole[o.example.external_id].rank for o in negatives
    )

    by_confidence = boundary_ranking(task, order="confidence")
    confidences = [original.confidence for original in by_confidence]
    assert confidences == sorted(confidences)


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"order": "random"}, "order"),
        ({"label": "neutral"}, "label"),
        ({"system_ids": [999999]}, "system"),
    ],
)
def test_bad_requests_are_named(geometry, options, field):
    with pytest.raises(ValidationError) as raised:
        boundary_ranking(geometry.shared_task, **options)
    assert field in raised.value.message_dict


def test_a_self_reported_system_is_not_part_of_the_ranking(geometry):
    from bibi.systems import services as system_services

    system_services.system_create(
        team=geometry.melbourne, actor=geometry.melbourne_builder, name="by hand",
        kind="self_reported",
    )  # fmt: skip
    with pytest.raises(ValidationError):
        boundary_ranking(geometry.shared_task, system_ids=[geometry.shared_task.systems.last().id])


# --- The API ---------------------------------------------------------------------------------


def test_the_api_pages_the_ranking_with_each_systems_view(geometry):
    response = geometry.cast.client("breaker").get(URL, {"page_size": 2})

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["count"] == 6 and len(body["results"]) == 2
    top = body["results"][0]
    assert top["id"] == "on" and top["rank"] == 1 and top["strategy"] == "label_preserving"
    # A system's name is its team's private record: breakers read its id.
    a, b = geometry.strawman_bow.id, geometry.melbourne_bow.id
    assert {view["system"] for view in top["systems"]} == {
        f"Strawman / system {a}",
        f"Melbourne / system {b}",
    }
    assert top["words"][0] == {"text": "the", "start": 0, "end": 3, "leverage": pytest.approx(
        top["words"][0]["leverage"]), "segment": "text"}  # fmt: skip
    second = geometry.cast.client("breaker").get(URL, {"page_size": 2, "page": 2}).json()
    assert second["results"][0]["rank"] == 3


def test_the_api_filters_by_system_and_label_and_orders_by_confidence(geometry):
    client = geometry.cast.client("breaker")
    system = geometry.strawman_bow.id

    body = client.get(URL, {"system": system, "label": "positive", "order": "confidence"}).json()

    assert {row["label"] for row in body["results"]} == {"positive"}
    assert all(
        [view["system_id"] for view in row["systems"]] == [system] for row in body["results"]
    )
    confidences = [row["confidence"] for row in body["results"]]
    assert confidences == sorted(confidences)
    # 1 − confidence is shown beside λmax, per original and per system.
    for row in body["results"]:
        assert row["uncertainty"] == pytest.approx(1 - row["confidence"])
        for view in row["systems"]:
            assert view["uncertainty"] == pytest.approx(1 - view["confidence"])
    bad = client.get(URL, {"order": "random", "label": "neutral", "system": "x"})
    assert bad.status_code == 400 and "system" in bad.json()


def test_anonymous_team_names_are_honoured(geometry):
    melbourne = geometry.melbourne
    melbourne.is_anonymous, melbourne.alias = True, "Team 4"
    melbourne.save()

    a, b = geometry.strawman_bow.id, geometry.melbourne_bow.id
    views = geometry.cast.client("breaker").get(URL).json()["results"][0]["systems"]
    assert {view["system"] for view in views} == {f"Strawman / system {a}", f"Team 4 / system {b}"}
    organizer = geometry.cast.client("organizer").get(URL).json()["results"][0]["systems"]
    assert {view["system"] for view in organizer} == {"Strawman / bow-a", "Melbourne / bow-b"}
    # With public guidance, a builder reads its own system's name and not the others'.
    geometry.shared_task.guidance_visibility = Visibility.PUBLIC
    geometry.shared_task.save()
    builder = geometry.cast.client("builder").get(URL).json()["results"][0]["systems"]
    assert {view["system"] for view in builder} == {"Strawman / bow-a", f"Team 4 / system {b}"}


# --- Who sees guidance -------------------------------------------------------------------------

# Expected status of GET guidance/ per visibility and role (the task is public).
SEES = {
    Visibility.ORGANIZERS: {"organizer"},
    Visibility.BREAKERS: {"organizer", "breaker"},
    Visibility.PUBLIC: set(ROLES),
}


@pytest.mark.parametrize("visibility", list(Visibility))
@pytest.mark.parametrize("role", ROLES)
def test_guidance_visibility_is_honoured_for_every_role(geometry, visibility, role):
    geometry.shared_task.guidance_visibility = visibility
    geometry.shared_task.save()
    client = geometry.cast.client(role)

    listing = client.get(URL)
    # An unknown original: whoever may ask learns only that (400), and no model runs.
    suggest = client.post(SUGGEST, {"original_id": "nope"}, format="json")

    if role in SEES[visibility]:
        assert listing.status_code == 200
        assert suggest.status_code == (400 if role != "anonymous" else 401)
    else:
        assert listing.status_code == 403, listing.content
        assert suggest.status_code in (401, 403)


@pytest.mark.parametrize("role", ROLES)
def test_a_private_task_hides_its_guidance_from_those_who_cannot_see_it(geometry, role):
    task = geometry.shared_task
    task.is_public, task.guidance_visibility = False, Visibility.PUBLIC
    task.save()

    status = geometry.cast.client(role).get(URL).status_code

    assert status == (200 if role in {"organizer", "builder", "breaker"} else 404)


@pytest.mark.parametrize("role", ["organizer", "breaker"])
def test_without_per_system_guidance_breakers_see_the_ranking_only(geometry, role):
    geometry.shared_task.guidance_shows_systems = False
    geometry.shared_task.save()
    client = geometry.cast.client(role)

    body = client.get(URL).json()
    filtered = client.get(URL, {"system": geometry.strawman_bow.id})

    top = body["results"][0]
    assert top["id"] == "on" and top["boundary_score"] == 1.0
    if role == "organizer":
        assert len(top["systems"]) == 2 and filtered.status_code == 200
    else:
        assert top["systems"] == [] and top["confidence"] is None
        assert top["uncertainty"] is None
        assert filtered.status_code == 403


def test_guidance_never_shows_a_blind_dev_label_nor_another_teams_pairs(geometry):
    task = geometry.shared_task
    task.guidance_visibility = Visibility.PUBLIC
    task.save()
    pair_services.pair_set_submit(
        team=geometry.cast.breaker_team,
        user=geometry.cast.breaker,
        pairs=pair_inputs(
            [{"original_id": "mild-pos", "variant_text": "the film is superb",
              "variant_label": "positive"}]
        ),
    )  # fmt: skip

    for role in ROLES:
        text = geometry.cast.client(role).get(URL, {"page_size": 100}).content.decode()
        assert "superb" not in text
        assert not any(dev_text in text for _, dev_text, _ in BLIND_DEV)
        ids = {row["id"] for row in geometry.cast.client(role).get(URL).json()["results"]}
        assert ids <= {"far-pos", "on", "mild-pos", "far-neg", "near", "mild-neg"}


def test_a_page_of_guidance_costs_the_same_queries_whatever_the_starter_set(geometry):
    from bibi.sharedtasks.models import Example
    from bibi.systems.models import Prediction

    from ..conftest import query_count

    client = geometry.cast.client("breaker")
    before = query_count(client, URL)
    # Thirty more originals, each with both systems' cells (copies of an existing one's).
    cells = list(Prediction.objects.filter(source="starter", example__external_id="on"))
    for n in range(30):
        example = Example.objects.create(
            dataset=geometry.cast.starter, external_id=f"more{n}", text=f"the film is good {n}",
            label="positive", position=100 + n,
        )  # fmt: skip
        for cell in cells:
            cell.pk, cell.example, cell.text_sha256 = None, example, f"{n:064d}"
            cell.save()

    assert query_count(client, URL) == before
    assert query_count(client, URL, page_size=36) == before


def test_the_guide_is_the_system_an_original_lies_nearest_the_boundary_of():
    assert guide_order({7: 0.25, 3: 0.9, 5: 0.9}) == [3, 5, 7]
    assert guide_order({}) == []


def test_a_label_changing_suggestion_means_the_other_label_where_there_is_one():
    binary, three = ["negative", "positive"], ["negative", "neutral", "positive"]

    def claim(source, keeps_label, original, labels, **more):
        suggestion = {"source": source, "keeps_label": keeps_label, **more}
        return suggestion_claim(suggestion, original, labels)

    assert claim("antonym", False, "positive", binary).label == "negative"
    assert claim("antonym", False, "positive", three).label == "negative"
    assert claim("antonym", False, "neutral", three).label is None
    assert claim("antonym", False, "neutral", three).label_unverified
    assert claim("synonym", True, "neutral", three).label == "neutral"
    # Probes claim nothing: an embedding neighbour, or an antonym without opposite opinions.
    assert claim("neighbour", True, "positive", binary).label is None
    probe = claim("antonym", False, "positive", binary, probe=True, label_unverified=False)
    assert probe.probe and probe.label is None and not probe.label_unverified
