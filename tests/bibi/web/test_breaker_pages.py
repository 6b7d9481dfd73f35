"""Breaker pages: pair-set uploads with every row error, sets and the final mark, the draft,
and contests from filing to the organizers' decision."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from bibi.pairs.models import Contest, Pair, PairSet

from ...conftest import REPO_ROOT
from ..pairs.conftest import GOOD_PAIRS, csv_bytes, start_phase_now, submit
from .conftest import SECRET_DRAFT_VARIANT, TASK, page_client

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]

PAIR_FIXTURES = REPO_ROOT / "fixtures" / "pairs"
WEB_FIXTURES = REPO_ROOT / "fixtures" / "web"


def upload(client, path, name=None):
    file = SimpleUploadedFile(name or path.name, path.read_bytes())
    return client.post(f"{TASK}pairs/upload/", {"file": file, "format": "", "label_map": ""})


def test_a_good_pair_set_is_submitted_and_shown(cast):
    client = page_client(cast, "breaker")
    response = upload(client, PAIR_FIXTURES / "background.csv")
    pair_set = PairSet.objects.get(team=cast.breaker_team)
    assert response["Location"] == f"{TASK}pair-sets/{pair_set.id}/"
    page = client.get(response["Location"]).content.decode()
    assert f"Pair set {pair_set.id} is submitted: 4 pairs." in page
    assert "the team's entry" in page
    assert "I&#x27;m mad for this movie!" in page


def test_a_bad_pair_set_lists_every_problem_by_line_and_stores_nothing(cast):
    response = upload(page_client(cast, "breaker"), WEB_FIXTURES / "pairs-bad.csv")
    assert response.status_code == 400
    html = response.content.decode()
    assert "Nothing was stored: 4 problem(s) in pairs-bad.csv." in html
    assert "Read as csv, utf-8." in html
    # Grouped by message (the unchanged variant twice), then each line.
    assert '<td class="num">2</td><td>2, 5</td>' in html
    for line in (2, 3, 4, 5):
        assert f'<tr><td class="num">{line}</td>' in html
    assert not PairSet.objects.exists()


def test_a_long_list_of_problems_shows_the_first_200_and_counts_them_all(cast):
    rows = [
        {"original_id": f"x{i}", "variant_text": f"Line {i}.", "variant_label": "positive"}
        for i in range(300)
    ]
    data = csv_bytes(rows)
    response = page_client(cast, "breaker").post(
        f"{TASK}pairs/upload/", {"file": SimpleUploadedFile("many.csv", data)}
    )
    html = response.content.decode()
    assert "Nothing was stored: 300 problem(s) in many.csv." in html
    assert "(the first 200 of 300)" in html
    assert html.count('<tr><td class="num">') == 200
    assert '<tr><td class="num">201</td>' in html
    assert '<tr><td class="num">202</td>' not in html


def test_a_pair_is_added_to_the_draft_removed_and_the_draft_submitted(cast):
    client = page_client(cast, "breaker")
    form = client.get(f"{TASK}pairs/?original=s4").content.decode()
    assert "Russell is terrific as coach Herb Brooks.</textarea>" in form

    for pair in GOOD_PAIRS[:2]:
        response = client.post(f"{TASK}pairs/draft/add/", {**pair, "tags": ["semantics"]})
        assert response.status_code == 302, response.content.decode()[:2000]
    draft = PairSet.objects.get(team=cast.breaker_team, status=PairSet.Status.DRAFT)
    assert draft.pairs.count() == 2

    refused = client.post(
        f"{TASK}pairs/draft/add/",
        {"original_id": "s3", "variant_text": "It's harmless, sure, but it's also charmless.",
         "variant_label": "negative"},
    )  # fmt: skip
    assert refused.status_code == 400
    assert "The pair was not added" in refused.content.decode()
    assert "the variant is identical to the original" in refused.content.decode()

    client.post(f"{TASK}pairs/draft/{draft.pairs.first().id}/remove/")
    assert draft.pairs.count() == 1
    response = client.post(f"{TASK}pairs/draft/submit/")
    draft.refresh_from_db()
    assert draft.status == PairSet.Status.SUBMITTED
    assert response["Location"] == f"{TASK}pair-sets/{draft.id}/"


def test_the_team_marks_a_set_final_and_unmarks_it(scene):
    cast = scene.cast
    later = submit(cast, GOOD_PAIRS[:1])
    client = page_client(cast, "breaker")
    page = client.get(f"{TASK}pairs/").content.decode()
    assert f'Your entry (what is scored) is <a href="{TASK}pair-sets/{later.id}/">' in page

    client.post(f"{TASK}pair-sets/{scene.pair_set.id}/final/", {"is_final": "1"})
    scene.pair_set.refresh_from_db()
    assert scene.pair_set.is_final
    assert (
        f"pair set {scene.pair_set.id}</a>, marked final"
        in client.get(f"{TASK}pairs/").content.decode()
    )

    client.post(f"{TASK}pair-sets/{scene.pair_set.id}/final/", {"is_final": "0"})
    scene.pair_set.refresh_from_db()
    assert not scene.pair_set.is_final


def test_a_removal_reaches_only_the_teams_own_draft(scene):
    submitted_pair = scene.pair_set.pairs.first()
    response = page_client(scene.cast, "breaker").post(
        f"{TASK}pairs/draft/{submitted_pair.id}/remove/"
    )
    assert response.status_code == 404
    assert Pair.objects.filter(id=submitted_pair.id).exists()


def test_the_draft_shows_its_pairs(scene):
    assert (
        SECRET_DRAFT_VARIANT
        in page_client(scene.cast, "breaker").get(f"{TASK}pairs/").content.decode()
    )


@pytest.fixture
def contest_phase(scene):
    start_phase_now(scene.cast.shared_task, "contest")
    return scene


def test_builders_read_the_pairs_only_once_their_pair_predictions_are_final(contest_phase):
    html = page_client(contest_phase.cast, "builder").get(f"{TASK}contests/pairs/").content.decode()
    assert "Builder teams read the other teams' pairs once" in html
    assert "Russell is &quot;terrific&quot;" not in html


def test_a_builder_contests_a_label_and_the_organizers_decide(contest_phase, settings):
    # The pair-prediction window closes with the break phase: builders may read the labels.
    settings.PAIR_PREDICTIONS_WINDOW_HOURS = 0
    cast = contest_phase.cast
    scare_quotes = contest_phase.pair_set.pairs.get(original__external_id="s4")
    builder = page_client(cast, "builder")
    listing = builder.get(f"{TASK}contests/pairs/").content.decode()
    assert "Russell is &quot;terrific&quot; as coach Herb Brooks." in listing
    # Contesting means reading the label, not who wrote it or why.
    assert "Utrecht" not in listing and "Scare quotes make praise sarcastic" not in listing

    filed = builder.post(
        f"{TASK}contests/pairs/{scare_quotes.id}/",
        {"reason": "Scare quotes need not be sarcastic."},
    )
    assert filed["Location"] == f"{TASK}contests/"
    contest = Contest.objects.get()
    assert "Scare quotes need not be sarcastic." in builder.get(f"{TASK}contests/").content.decode()
    twice = builder.post(f"{TASK}contests/pairs/{scare_quotes.id}/", {"reason": "Again."})
    assert twice.status_code == 400
    assert "Your team has already contested this pair." in twice.content.decode()

    organizer = page_client(cast, "organizer")
    queue = organizer.get(f"{TASK}organize/contests/").content.decode()
    assert f"Decide contest {contest.id}" in queue
    prefix = f"contest-{contest.id}"
    missing_label = organizer.post(
        f"{TASK}organize/contests/{contest.id}/decide/",
        {f"{prefix}-decision": "relabel", f"{prefix}-note": "Fair point."},
    )
    assert missing_label.status_code == 400
    assert "Relabel to one of negative, positive." in missing_label.content.decode()
    organizer.post(
        f"{TASK}organize/contests/{contest.id}/decide/",
        {f"{prefix}-decision": "relabel", f"{prefix}-new_label": "positive",
         f"{prefix}-note": "Read literally, it is praise."},
    )  # fmt: skip
    scare_quotes.refresh_from_db()
    assert scare_quotes.effective_label == "positive"
    breakers_view = page_client(cast, "breaker").get(f"{TASK}contests/").content.decode()
    assert "Read literally, it is praise." in breakers_view


def test_outside_the_contest_phase_no_pair_can_be_contested(scene):
    pair = scene.pair_set.pairs.first()
    builder = page_client(scene.cast, "builder")
    assert "The contest phase is not open now" in builder.get(f"{TASK}contests/").content.decode()
    assert builder.get(f"{TASK}contests/pairs/{pair.id}/").status_code == 404


def test_a_dry_run_checks_the_file_and_stores_nothing(cast):
    client = page_client(cast, "breaker")
    file = SimpleUploadedFile("background.csv", (PAIR_FIXTURES / "background.csv").read_bytes())
    response = client.post(f"{TASK}pairs/upload/", {"file": file, "dry_run": "1"}, follow=True)
    assert "background.csv passes every check (4 pairs). Nothing was stored" in (
        response.content.decode()
    )
    assert not PairSet.objects.exists()


def test_a_set_that_replaces_the_entry_says_so(scene):
    client = page_client(scene.cast, "breaker")
    file = SimpleUploadedFile("one.csv", csv_bytes(GOOD_PAIRS[:1]))
    page = client.post(f"{TASK}pairs/upload/", {"file": file}, follow=True).content.decode()
    assert f"replaces set {scene.pair_set.id} (4 pairs, submitted" in page
    assert 'class="notice notice-warning"' in page


def test_a_contest_replaced_by_a_later_decision_says_it_is_superseded(contest_phase, settings):
    from bibi.pairs import services as pair_services
    from bibi.sharedtasks import services as task_services

    settings.PAIR_PREDICTIONS_WINDOW_HOURS = 0
    cast = contest_phase.cast
    pair = contest_phase.pair_set.pairs.get(original__external_id="s4")
    rival_owner = cast.outsider
    task_services.team_create(
        shared_task=cast.shared_task, owner=rival_owner, kind="breaker", name="OSU"
    )
    first = pair_services.contest_create(pair=pair, user=cast.builder, reason="Not sarcastic.")
    second = pair_services.contest_create(pair=pair, user=rival_owner, reason="Unclear.")
    pair_services.contest_adjudicate(
        contest=first,
        actor=cast.organizer,
        decision="relabel",
        new_label="positive",
        note="Praise.",
    )
    pair_services.contest_adjudicate(
        contest=second, actor=cast.organizer, decision="keep", note="Sarcasm after all."
    )
    builders_view = page_client(cast, "builder").get(f"{TASK}contests/").content.decode()
    assert (
        "(superseded: a later decision on this pair, in another contest, stands)" in builders_view
    )
    queue = page_client(cast, "organizer").get(f"{TASK}organize/contests/").content.decode()
    assert f"Contest {first.id}: relabelled to positive, superseded" in queue
    assert f"Contest {second.id}: label kept, the pair's state" in queue
