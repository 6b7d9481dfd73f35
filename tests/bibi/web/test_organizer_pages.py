"""Organizer pages: a new task, its phases, imports with row errors, teams, systems."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from bibi.sharedtasks.models import AuditLogEntry, Phase, SharedTask

from ...conftest import REPO_ROOT
from .conftest import SECRET_FAILURE, SECRET_SYSTEM, TASK, page_client

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]

WEB_FIXTURES = REPO_ROOT / "fixtures" / "web"


def local(moment) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M")


def test_a_signed_in_user_creates_a_task_and_organizes_it(cast):
    client = page_client(cast, "outsider")
    response = client.post(
        "/tasks/new/",
        {"name": "NLI 2026", "slug": "nli-2026", "description": "Entailment.",
         "labels": "entailment, neutral, contradiction", "is_public": "on"},
    )  # fmt: skip
    assert response["Location"] == "/tasks/nli-2026/organize/phases/"
    task = SharedTask.objects.get(slug="nli-2026")
    assert task.labels == ["entailment", "neutral", "contradiction"]
    assert task.organizer_set.get().user == cast.outsider


def test_a_taken_slug_is_refused_beside_the_slug_field(cast):
    response = page_client(cast, "outsider").post(
        "/tasks/new/", {"name": "Again", "slug": "sst", "labels": "a, b"}
    )
    assert response.status_code == 400
    assert 'id="id_slug_error"' in response.content.decode()


def test_an_organizer_schedules_moves_and_extends_phases(db):
    from ..conftest import build_cast

    cast = build_cast()
    client = page_client(cast, "organizer")
    results = cast.shared_task.phases.get(kind="results")
    start = timezone.now() + timedelta(days=40)
    moved = client.post(
        f"{TASK}organize/phases/results/",
        {"results-starts_at": local(start), "results-ends_at": local(start + timedelta(days=3))},
    )
    assert moved.status_code == 302
    results.refresh_from_db()
    assert results.starts_at == start.replace(second=0, microsecond=0)

    earlier = client.post(
        f"{TASK}organize/phases/results/extend/",
        {"results-extend-ends_at": local(start + timedelta(days=1)), "results-extend-reason": ""},
    )
    assert earlier.status_code == 400
    assert "An extension must end after the current deadline" in earlier.content.decode()
    extended = client.post(
        f"{TASK}organize/phases/results/extend/",
        {"results-extend-ends_at": local(start + timedelta(days=9)),
         "results-extend-reason": "late data"},
    )  # fmt: skip
    assert extended.status_code == 302
    entry = AuditLogEntry.objects.filter(action="phase.extend").get()
    assert entry.details["reason"] == "late data"


def test_a_new_task_gets_its_phases_from_the_form(cast):
    client = page_client(cast, "other_organizer")
    start = timezone.now() + timedelta(days=1)
    page = client.get("/tasks/other/organize/phases/").content.decode()
    assert "Schedule a phase" in page
    response = client.post(
        "/tasks/other/organize/phases/create/",
        {"new-kind": "build", "new-starts_at": local(start),
         "new-ends_at": local(start + timedelta(days=7))},
    )  # fmt: skip
    assert response.status_code == 302
    assert Phase.objects.filter(shared_task=cast.other_task, kind="build").exists()
    overlapping = client.post(
        "/tasks/other/organize/phases/create/",
        {"new-kind": "break", "new-starts_at": local(start + timedelta(days=2)),
         "new-ends_at": local(start + timedelta(days=9))},
    )  # fmt: skip
    assert overlapping.status_code == 400
    assert "The break phase would overlap the build phase" in overlapping.content.decode()


def import_file(client, path, split="starter", slug="other"):
    return client.post(
        f"/tasks/{slug}/organize/datasets/import/",
        {"split": split, "file": SimpleUploadedFile(path.name, path.read_bytes()),
         "file_format": "", "label_map": "", "id_column": "id", "text_column": "text",
         "label_column": "label"},
    )  # fmt: skip


def test_an_organizer_imports_the_starter_set_and_sees_the_import(cast):
    client = page_client(cast, "other_organizer")
    response = import_file(client, WEB_FIXTURES / "starter.csv")
    assert response["Location"] == "/tasks/other/organize/datasets/"
    page = client.get(response["Location"]).content.decode()
    assert "Imported 4 examples into the starter dataset from starter.csv (csv, utf-8)." in page
    assert '<td>starter.csv (csv, utf-8)</td>\n          <td class="num">4</td>' in page


def test_a_bad_import_lists_every_row_and_stores_nothing(cast):
    response = import_file(page_client(cast, "other_organizer"), WEB_FIXTURES / "starter-bad.csv")
    assert response.status_code == 400
    html = response.content.decode()
    assert "Nothing was stored: 3 problem(s) in starter-bad.csv." in html
    for line in (3, 4, 5):
        assert f'<tr><td class="num">{line}</td>' in html
    assert not cast.other_task.datasets.filter(examples__isnull=False).exists()


def test_the_teams_page_names_every_member(scene):
    html = page_client(scene.cast, "organizer").get(f"{TASK}organize/teams/").content.decode()
    for name in ("Strawman", "Utrecht", "bea", "brian"):
        assert name in html


def test_the_systems_page_shows_every_status_and_failure(scene):
    html = page_client(scene.cast, "organizer").get(f"{TASK}organize/systems/").content.decode()
    assert SECRET_SYSTEM in html
    assert "badge-ready" in html and "badge-failed" in html
    assert SECRET_FAILURE in html


def test_the_dashboard_counts_what_needs_attention(scene):
    html = page_client(scene.cast, "organizer").get(f"{TASK}organize/").content.decode()
    assert "<dt>Versions failed</dt><dd>1</dd>" in html
    assert "<dt>Contests to decide</dt><dd>0</dd>" in html


def test_a_private_task_is_entered_by_an_organizers_link(cast):
    cast.shared_task.is_public = False
    cast.shared_task.save()
    organizer = page_client(cast, "organizer")
    organizer.post(f"{TASK}organize/task-invitations/", {"note": "Oscar", "max_uses": "1"})
    invitation = cast.shared_task.task_invitations.get()
    link = f"/task-invitations/{invitation.token}/"
    assert link in organizer.get(f"{TASK}organize/teams/").content.decode()

    oscar = page_client(cast, "outsider")
    assert oscar.get(TASK).status_code == 404
    assert "Enter SST sentiment" in oscar.get(link).content.decode()
    assert oscar.post(link)["Location"] == TASK
    assert oscar.get(TASK).status_code == 200

    used_up = page_client(cast, "other_organizer").post(link, follow=True)
    assert "This invitation has been used as often as it may be." in used_up.content.decode()

    revoke = f"{TASK}organize/task-invitations/{invitation.id}/revoke/"
    asked = organizer.post(revoke).content.decode()
    assert "Revoke this link into the task?" in asked
    assert "the 1 account it already let in keeps its access." in asked
    invitation.refresh_from_db()
    assert invitation.revoked_at is None
    organizer.post(revoke, {"confirm": "yes"})
    invitation.refresh_from_db()
    assert invitation.revoked_at is not None


def test_a_task_link_that_expired_already_is_refused_beside_its_field(cast):
    response = page_client(cast, "organizer").post(
        f"{TASK}organize/task-invitations/", {"expires_at": "2001-01-01T00:00"}
    )
    assert response.status_code == 400
    assert 'id="id_expires_at_error"' in response.content.decode()
    assert not cast.shared_task.task_invitations.exists()


def test_an_organizer_closes_the_running_phase_early(cast):
    client = page_client(cast, "organizer")
    assert "Close the break phase now" in client.get(f"{TASK}organize/phases/").content.decode()
    close = f"{TASK}organize/phases/break/close-now/"
    page = client.post(close, {"confirm": "on"}, follow=True).content.decode()
    assert "The break phase is closed and the contest phase has begun." in page
    assert cast.shared_task.phase_at().kind == "contest"
    again = client.post(close, {"confirm": "on"}, follow=True)
    assert "Only a running phase can be closed now" in again.content.decode()


def test_a_span_task_is_created_with_its_answer_mode_and_shows_its_type(cast):
    client = page_client(cast, "outsider")
    response = client.post(
        "/tasks/new/",
        {"name": "QA-SRL 2026", "slug": "qasrl-2026", "task_type": "span_extraction",
         "answer_mode": "overlap_2017", "is_public": "on"},
    )  # fmt: skip
    assert response["Location"] == "/tasks/qasrl-2026/organize/phases/"
    task = SharedTask.objects.get(slug="qasrl-2026")
    assert (task.task_type, task.answer_mode) == ("span_extraction", "overlap_2017")
    page = client.get("/tasks/qasrl-2026/").content.decode()
    assert "Span extraction" in page and "overlap_2017" in page
    settings = client.get("/tasks/qasrl-2026/organize/settings/").content.decode()
    assert 'name="answer_f1_threshold"' in settings and 'name="labels"' not in settings
    saved = client.post(
        "/tasks/qasrl-2026/organize/settings/",
        {**_settings_values(task), "answer_mode": "token_f1",
         "answer_f1_threshold": "0.6"},
    )  # fmt: skip
    assert saved.status_code in (200, 302), saved.content.decode()[:2000]
    task.refresh_from_db()
    assert (task.answer_mode, task.answer_f1_threshold) == ("token_f1", 0.6)


def test_a_label_task_needs_its_labels(cast):
    response = page_client(cast, "outsider").post(
        "/tasks/new/", {"name": "No labels", "slug": "no-labels", "labels": ""}
    )
    assert response.status_code == 400
    assert "A label task needs its labels" in response.content.decode()


def _settings_values(task: SharedTask) -> dict[str, str]:
    from bibi.web.organize_forms import TaskSettingsForm

    form = TaskSettingsForm(shared_task=task)
    values = {}
    for name in form.fields:
        value = form.initial.get(name)
        if isinstance(value, bool):
            if value:
                values[name] = "on"
        elif value is not None:
            values[name] = str(value)
    return values


def test_an_organizer_imports_the_shared_qasrl_dev_set_into_a_span_task(cast):
    client = page_client(cast, "outsider")
    client.post(
        "/tasks/new/",
        {"name": "QA-SRL page", "slug": "qasrl-page", "task_type": "span_extraction"},
    )
    path = REPO_ROOT.parent / "shared" / "data" / "qasrl" / "wiki1.dev.qa"
    refused = import_file(client, path, split="blind_dev", slug="qasrl-page")
    assert refused.status_code == 400
    assert "is not a span of the sentence" in refused.content.decode()
    response = client.post(
        "/tasks/qasrl-page/organize/datasets/import/",
        {"split": "blind_dev", "file": SimpleUploadedFile(path.name, path.read_bytes()),
         "file_format": "", "label_map": "", "id_column": "id", "text_column": "text",
         "label_column": "label", "drop_unmatched": "on"},
    )  # fmt: skip
    assert response["Location"] == "/tasks/qasrl-page/organize/datasets/"
    page = client.get(response["Location"]).content.decode()
    assert "Imported 2178 examples into the blind_dev dataset from wiki1.dev.qa (qa, utf-8)" in page
    # The form offers the partial import (store the valid rows, list the refused ones).
    assert 'name="partial"' in page
    examples = client.get("/tasks/qasrl-page/data/blind_dev/").content.decode()
    assert '<th scope="col">Question</th>' in examples
    assert "what might be oxygenated?" in examples
    assert "<mark>areas of the Baltic that have experienced eutrophication</mark>" in examples
