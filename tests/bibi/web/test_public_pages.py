"""The pages everyone reads: the home page, a task, its datasets."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from bibi.sharedtasks import services
from bibi.sharedtasks.models import Phase

from ..conftest import BLIND_DEV, STARTER
from .conftest import TASK, page_client

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]


def schedule(shared_task, actor, *, first_start: timedelta) -> None:
    start = timezone.now() + first_start
    for kind in Phase.Kind.values:
        services.phase_create(
            shared_task=shared_task,
            actor=actor,
            kind=kind,
            starts_at=start,
            ends_at=start + timedelta(days=5),
        )
        start += timedelta(days=5)


def test_the_home_page_lists_tasks_as_open_upcoming_and_finished(cast):
    finished = services.shared_task_create(creator=cast.organizer, name="Done 2017", slug="done")
    schedule(finished, cast.organizer, first_start=timedelta(days=-16))
    upcoming = services.shared_task_create(creator=cast.organizer, name="Next year", slug="next")
    schedule(upcoming, cast.organizer, first_start=timedelta(days=30))

    html = page_client(cast, "anonymous").get("/").content.decode()

    open_part, _, rest = html.partition('id="upcoming-heading"')
    upcoming_part, _, rest = rest.partition('id="finished-heading"')
    finished_part, _, unscheduled_part = rest.partition('id="unscheduled-heading"')
    assert "SST sentiment" in open_part
    assert "Next year" in upcoming_part and "Done 2017" in finished_part
    # A task with no phase yet ("Other task") has no date to be upcoming for.
    assert "Other task" not in upcoming_part
    assert "Not scheduled yet" in unscheduled_part and "Other task" in unscheduled_part


def test_a_description_written_with_backticks_shows_code_not_backticks(cast):
    cast.shared_task.description = (
        "Built by `make demo` from <b>SST</b>; run `python -m fim_engine train` to follow."
    )
    cast.shared_task.save()
    client = page_client(cast, "anonymous")
    for html in (client.get("/").content.decode(), client.get(TASK).content.decode()):
        assert "<code>make demo</code>" in html
        assert "<code>python -m fim_engine train</code>" in html
        assert "&lt;b&gt;SST&lt;/b&gt;" in html  # still escaped
        assert "`" not in html.partition("<main")[2].partition("</main>")[0]


def test_a_private_task_is_neither_listed_nor_shown_to_outsiders(cast):
    cast.shared_task.is_public = False
    cast.shared_task.save()
    outsider = page_client(cast, "outsider")
    assert "SST sentiment" not in outsider.get("/").content.decode()
    assert outsider.get(TASK).status_code == 404
    assert "SST sentiment" in page_client(cast, "breaker").get("/").content.decode()


def test_the_task_page_shows_the_schedule_the_labels_and_the_numbers(scene):
    html = page_client(scene.cast, "anonymous").get(TASK).content.decode()
    break_end = scene.cast.shared_task.phases.get(kind="break").ends_at
    assert f'datetime="{break_end.isoformat()}"' in html
    assert "The break phase closes at" in html
    for label in ("negative", "positive"):
        assert f'<li class="badge">{label}</li>' in html
    numbers = {
        "Builder teams": 1,
        "Breaker teams": 1,
        "Systems taking part": 1,
        # The breakers' entry: the four pairs of their submitted set (the draft is no entry).
        "Pairs entered": 4,
    }
    for name, value in numbers.items():
        assert f"<dt>{name}</dt><dd>{value}</dd>" in html


def test_the_starter_set_is_public_with_its_labels(cast):
    html = page_client(cast, "anonymous").get(f"{TASK}data/starter/").content.decode()
    for _, text, label in STARTER:
        assert f"<td>{text}</td>\n        <td>{label}</td>".replace("'", "&#x27;") in html


def test_a_search_narrows_the_examples(cast):
    html = page_client(cast, "anonymous").get(f"{TASK}data/starter/?q=Russell").content.decode()
    assert "Russell is terrific" in html
    assert "I love this movie!" not in html


@pytest.mark.parametrize("role", ["builder", "breaker"])
def test_participants_read_the_blind_dev_texts_without_their_labels(cast, role):
    html = page_client(cast, role).get(f"{TASK}data/blind_dev/").content.decode()
    for _, text, _ in BLIND_DEV:
        assert text in html
    assert '<th scope="col">Label</th>' not in html
    assert "The blind dev labels are hidden" in html


def test_organizers_read_the_blind_dev_labels(cast):
    html = page_client(cast, "organizer").get(f"{TASK}data/blind_dev/").content.decode()
    assert '<th scope="col">Label</th>' in html


@pytest.mark.parametrize("role", ["other_organizer", "outsider", "anonymous"])
def test_outsiders_do_not_read_the_blind_dev_texts(cast, role):
    response = page_client(cast, role).get(f"{TASK}data/blind_dev/")
    assert response.status_code == 403
    assert BLIND_DEV[0][1] not in response.content.decode()


def test_an_unknown_page_answers_with_the_sites_404_page(cast):
    response = page_client(cast, "anonymous").get("/no/such/page/")
    assert response.status_code == 404
    assert "This page does not exist" in response.content.decode()


def test_a_server_error_answers_with_the_sites_500_page(rf):
    from django.views.defaults import server_error

    response = server_error(rf.get("/"))
    assert response.status_code == 500
    assert "Something went wrong on our side" in response.content.decode()
