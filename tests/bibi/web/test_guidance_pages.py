"""The guidance page and the pair editor: who gets them under every visibility, what they show,
what the editor's buttons do, and what the pages cost in queries."""

from __future__ import annotations

import html
import re

import pytest

from bibi.pairs.models import PairSet
from bibi.sharedtasks.models import Example, SharedTask
from bibi.systems.models import Prediction

from ..conftest import BLIND_DEV, ROLES
from .conftest import page_client

pytestmark = pytest.mark.embedded

ORG, OTHER, BUILDER, BREAKER, OUTSIDER, ANON = ROLES
GUIDANCE = "/tasks/sst/guidance/"
EDITOR = "/tasks/sst/guidance/mild-pos/edit/"
Visibility = SharedTask.GuidanceVisibility


def page(geometry, role: str, url: str = GUIDANCE, **params):
    return page_client(geometry.cast, role).get(url, params)


# Status of the guidance page per visibility and role: refused signed-in users get a 403
# that says who sees it; anonymous visitors are sent to log in.
GUIDANCE_STATUS = {
    Visibility.ORGANIZERS: {ORG: 200, OTHER: 403, BUILDER: 403, BREAKER: 403, OUTSIDER: 403, ANON: 302},
    Visibility.BREAKERS: {ORG: 200, OTHER: 403, BUILDER: 403, BREAKER: 200, OUTSIDER: 403, ANON: 302},
    Visibility.PUBLIC: dict.fromkeys(ROLES, 200),
}  # fmt: skip


@pytest.mark.parametrize("visibility", list(Visibility))
@pytest.mark.parametrize("role", ROLES)
def test_every_visibility_mode_opens_the_guidance_page_to_its_roles(geometry, visibility, role):
    geometry.shared_task.guidance_visibility = visibility
    geometry.shared_task.save()

    response = page(geometry, role)
    editor = page(geometry, role, EDITOR)

    assert response.status_code == GUIDANCE_STATUS[visibility][role]
    if response.status_code == 403:
        assert "guidance to its organizers" in response.content.decode()
    # The editor is the breakers' (it adds to their draft); trying a variant on the systems
    # is offered only where the guidance is open to them.
    assert editor.status_code == {BREAKER: 200, ANON: 302}.get(role, 403)
    if role == BREAKER:
        offered = "Try it on the systems" in editor.content.decode()
        assert offered == (visibility != Visibility.ORGANIZERS)
    task_page = page(geometry, role, "/tasks/sst/").content.decode()
    assert (f'href="{GUIDANCE}"' in task_page) == (GUIDANCE_STATUS[visibility][role] == 200)


def test_the_page_lists_originals_by_boundary_rank_with_the_decisive_word_shaded(geometry):
    text = page(geometry, BREAKER).content.decode()

    order = [text.index(f">{eid}<") for eid in ("on", "mild-pos", "far-pos")]
    assert order == sorted(order)
    assert '<span class="shade-4" title="' in text and ">good</span>" in text
    assert "Most leverage: “good”" in text
    assert "keep the label" in text and "change the label" in text
    # Each system's view, named as a breaker may name it: the team, and the system's id.
    assert f"Strawman / system {geometry.strawman_bow.id}" in text
    assert "bow-a" not in text and "bow-b" not in text
    assert f'href="{EDITOR}"' in text
    # λmax beside 1 − confidence, with what each is worth and how rarely suggestions transfer.
    assert '<th scope="col" class="num">1 − confidence</th>' in text
    assert "0.01–0.03" in html.unescape(text) and "rarely transfers" in text


def test_without_per_system_guidance_the_page_shows_the_ranking_only(geometry):
    geometry.shared_task.guidance_shows_systems = False
    geometry.shared_task.save()

    breaker = page(geometry, BREAKER).content.decode()
    organizer = page(geometry, ORG).content.decode()

    assert (
        "What each system says" not in breaker
        and "system " + str(geometry.strawman_bow.id) not in breaker
    )
    assert "boundary score 100.0%" in breaker
    assert "What each system says" in organizer and "bow-a" in organizer


def test_the_page_filters_by_label_and_system_and_orders_by_confidence(geometry):
    text = page(geometry, BREAKER, label="negative", order="confidence",
                system=geometry.melbourne_bow.id).content.decode()  # fmt: skip

    assert ">far-neg<" in text and ">far-pos<" not in text
    # Strawman's system is only offered in the filter, in no original's table.
    assert text.count(f"Strawman / system {geometry.strawman_bow.id}") == 1
    # The least confident first: the boundary original before the confident negative one.
    assert text.index(">on<") < text.index(">far-neg<")
    # A value out of its field's choices is refused beside it; the other filters still apply.
    bad = page(geometry, BREAKER, label="neutral", order="confidence").content.decode()
    assert "Select a valid choice" in bad
    assert bad.index(">on<") < bad.index(">mild-pos<") < bad.index(">far-pos<")


def test_no_guidance_page_shows_a_blind_dev_text_or_another_teams_pairs(geometry):
    geometry.shared_task.guidance_visibility = Visibility.PUBLIC
    geometry.shared_task.save()
    for role in ROLES:
        for url in (GUIDANCE, EDITOR):
            text = html.unescape(page(geometry, role, url).content.decode())
            assert not any(dev_text in text for _, dev_text, _ in BLIND_DEV)


def post(geometry, action: str, variant: str, label: str = "positive", **extra):
    return page_client(geometry.cast, BREAKER).post(
        EDITOR,
        {"original_id": "mild-pos", "variant_text": variant, "variant_label": label,
         "action": action, **extra},
    )  # fmt: skip


def test_the_editor_checks_a_pair_without_storing_it(geometry):
    response = post(geometry, "check", "the film is great")

    assert response.status_code == 200
    text = response.content.decode()
    assert "The pair passes every check." in text
    assert "[removed: </span>good<" in text and "[added: </span>great<" in text
    assert not PairSet.objects.filter(team=geometry.cast.breaker_team).exists()


def test_the_editor_says_why_a_pair_is_not_minimal(geometry):
    response = post(geometry, "add", "an entirely different sentence about nothing at all")

    assert response.status_code == 400
    text = html.unescape(response.content.decode())
    assert "This is not a pair the task accepts:" in text
    assert "edit" in text.split("This is not a pair the task accepts:")[1][:400]
    assert not PairSet.objects.filter(team=geometry.cast.breaker_team).exists()


def test_the_editor_adds_a_good_pair_to_the_draft(geometry):
    response = post(geometry, "add", "the film is great", tags=["semantics"])

    assert response.status_code == 302 and response["Location"] == "/tasks/sst/pairs/"
    draft = PairSet.objects.get(team=geometry.cast.breaker_team, status="draft")
    pair = draft.pairs.get()
    assert (pair.original_text, pair.variant_text, pair.tags) == (
        "the film is good", "the film is great", ["semantics"]
    )  # fmt: skip


@pytest.mark.parametrize(
    ("variant", "label", "machine", "unverified"),
    [
        # A machine's label-changing suggestion, added as offered: nobody checked the label.
        ("the film is bad", "negative", "the film is bad", True),
        # The breaker's own edit, or the suggestion edited by hand: the breaker claims the label.
        ("the film is bad", "negative", "", False),
        ("the film is awful", "negative", "the film is bad", False),
        # A machine's label-keeping suggestion keeps the label: nothing to verify.
        ("the film is great", "positive", "the film is great", False),
    ],
)
def test_a_machine_made_label_change_is_added_label_unverified(
    geometry, variant, label, machine, unverified
):
    response = post(geometry, "add", variant, label=label, machine_text=machine)

    assert response.status_code == 302
    pair = PairSet.objects.get(team=geometry.cast.breaker_team, status="draft").pairs.get()
    assert (pair.variant_text, pair.variant_label) == (variant, label)
    assert pair.label_unverified is unverified


def test_the_editor_refuses_a_missing_button_and_an_unknown_original(geometry):
    assert post(geometry, "", "the film is great").status_code == 400
    missing = page_client(geometry.cast, BREAKER).get("/tasks/sst/guidance/nope/edit/")
    assert missing.status_code == 404


def test_trying_a_variant_shows_each_systems_prediction(geometry, settings):
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("runs the models in-process; the browser test uses a real worker")

    response = post(geometry, "try", "the film is bad", label="positive")

    assert response.status_code == 200
    text = html.unescape(response.content.decode())
    assert "2 of 2 systems would break" in text
    assert f"Strawman / system {geometry.strawman_bow.id}" in text
    assert "negative" in text and "changed" in text


def test_the_editor_suggests_verified_edits_each_ready_to_try(geometry, settings):
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("runs the models in-process; the browser test uses a real worker")
    client = page_client(geometry.cast, BREAKER)

    response = client.post(EDITOR, {"action": "suggest"})

    assert response.status_code == 200
    text = html.unescape(response.content.decode())
    row = text[text.index("<td>the film is bad</td>") :][:900]
    assert "antonym: changes it to negative" in row
    assert '<td class="num">2</td>' in row and '<td class="num">0</td>' in row
    assert 'name="variant_text" value="the film is bad"' in row
    assert 'name="variant_label" value="negative"' in row
    # A label change is a guess until validated; the machine's text travels with "Try".
    assert "label unverified" in row and 'name="machine_text" value="the film is bad"' in row
    # λmax beside 1 − confidence, and how rarely a verified suggestion transfers.
    assert "beside 1 − confidence" in text and "rarely transfers" in text
    # The variant form is left as it was (the original), not refused.
    assert "This field is required" not in text


def test_a_probe_on_the_page_claims_no_label_and_its_try_asks_for_one(geometry, settings):
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("runs the models in-process; the browser test uses a real worker")
    client = page_client(geometry.cast, BREAKER)

    text = html.unescape(client.post(EDITOR, {"action": "suggest"}).content.decode())

    rows = re.findall(r"<tr>\s*<td>.*?</tr>", text, re.S)
    probes = [row for row in rows if "a probe of the model (claims no label)" in row]
    assert probes, "the guide's nearest words are shown as probes"
    for row in probes:
        assert "keeps the label" not in row and "label unverified" not in row
        # No label travels with the probe: "Try" asks the breaker for one.
        assert 'type="hidden" name="variant_label"' not in row
        assert '<select name="variant_label"' in row and "required" in row
        assert row.count('<td class="num">') == 2 and '<td class="num">—</td>' in row
    # Tried without a label, the editor asks for one instead of assuming the original's.
    variant = re.search(r'name="variant_text" value="([^"]*)"', probes[0]).group(1)
    response = post(geometry, "try", variant, label="")
    assert response.status_code == 400
    assert "This field is required" in response.content.decode()


def test_asking_the_systems_too_often_is_refused_with_the_wait(geometry, monkeypatch):
    from bibi.guidance.apis import GuidanceSuggestThrottle

    monkeypatch.setattr(GuidanceSuggestThrottle, "rate", "0/minute", raising=False)

    response = post(geometry, "try", "the film is bad")

    assert response.status_code == 429
    assert "You have asked the systems too often" in response.content.decode()


def test_a_variant_tried_while_no_worker_answers_waits_then_says_so(
    geometry, settings, monkeypatch
):
    if settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("the embedded default runs the models in-process")
    import time

    from bibi.guidance import jobs
    from bibi.guidance.tasks import guidance_suggest_task

    settings.GUIDANCE_SUGGEST_WAIT = 1
    jobs._registries.clear()
    # The suite's shared worker may be running: send to a queue that no worker reads.
    send = guidance_suggest_task.apply_async
    monkeypatch.setattr(
        guidance_suggest_task,
        "apply_async",
        lambda *args, **options: send(*args, **{**options, "queue": "gpu-nobody-reads"}),
    )

    response = post(geometry, "try", "the film is bad")

    assert response.status_code == 202
    text = response.content.decode()
    assert 'id="job-waiting"' in text and "waiting for a model worker" in text
    follow = re.search(r'data-result-url="([^"]+)"', text).group(1).replace("&amp;", "&")
    assert page_client(geometry.cast, BREAKER).get(follow).status_code == 202
    # Past the longest a job can wait and run, the page says nobody took it.
    later = time.time() + jobs.in_flight_deadline(0) + 1
    monkeypatch.setattr(time, "time", lambda: later)
    failed = page_client(geometry.cast, BREAKER).get(follow)
    monkeypatch.undo()
    assert failed.status_code == 503
    assert "No model worker took the job within" in failed.content.decode()
    # The draft the job checked is in the form again.
    assert "the film is bad</textarea>" in failed.content.decode()


def _grow(geometry, count: int) -> None:
    """``count`` more starter originals, each with both systems' cells."""
    cells = list(Prediction.objects.filter(source="starter", example__external_id="on"))
    for n in range(count):
        example = Example.objects.create(
            dataset=geometry.cast.starter, external_id=f"more{n}",
            text=f"the film is good but bad {n}", label="negative", position=100 + n,
        )  # fmt: skip
        for cell in cells:
            cell.pk, cell.example, cell.text_sha256 = None, example, f"{n:064d}"
            cell.save()


@pytest.mark.parametrize("url", [GUIDANCE, EDITOR])
@pytest.mark.parametrize("role", [ORG, BREAKER])
def test_the_pages_cost_at_most_15_queries_whatever_the_starter_set(geometry, url, role):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client = page_client(geometry.cast, role if url == GUIDANCE else BREAKER)

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(url).status_code == 200
        return len(captured.captured_queries)

    small = queries()
    _grow(geometry, 40)
    assert queries() == small <= 15
