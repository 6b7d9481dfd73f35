"""The admin for organizers: each sees only the tasks they organize; deadline changes are audited."""

from __future__ import annotations

from datetime import timedelta
from html.parser import HTMLParser

import pytest
from django.contrib.auth.models import Permission

from bibi.sharedtasks.models import AuditLogEntry, Example, Phase

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]


class FormFields(HTMLParser):
    """The values a browser would submit for the page's main form."""

    def __init__(self) -> None:
        super().__init__()
        self.fields: dict[str, str] = {}
        self._select: str | None = None
        self._textarea: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        name = a.get("name")
        if tag == "input" and name and a.get("type") not in {"submit", "button", "file"}:
            if a.get("type") == "checkbox":
                if "checked" in a:
                    self.fields[name] = "on"
            else:
                self.fields[name] = a.get("value") or ""
        elif tag == "select" and name:
            self._select = name
            self.fields.setdefault(name, "")
        elif tag == "option" and self._select and "selected" in a:
            self.fields[self._select] = a.get("value") or ""
        elif tag == "textarea" and name:
            self._textarea = name
            self.fields[name] = ""

    def handle_endtag(self, tag):
        if tag == "select":
            self._select = None
        if tag == "textarea":
            self._textarea = None

    def handle_data(self, data):
        if self._textarea:
            self.fields[self._textarea] += data


def staff_organizer(cast):
    user = cast.organizer
    user.is_staff = True
    user.save()
    user.user_permissions.set(
        Permission.objects.filter(content_type__app_label__in=["sharedtasks", "systems", "pairs"])
    )
    from django.test import Client

    client = Client()
    client.force_login(user)
    return client


def test_an_organizer_sees_only_the_tasks_they_organize(cast):
    client = staff_organizer(cast)
    page = client.get("/admin/sharedtasks/sharedtask/")
    assert page.status_code == 200
    assert b"SST sentiment" in page.content and b"Other task" not in page.content
    assert (
        client.get(f"/admin/sharedtasks/sharedtask/{cast.other_task.pk}/change/").status_code == 302
    )


def test_an_organizer_sees_no_example_of_another_task(cast):
    from bibi.sharedtasks import services

    other = services.dataset_get_or_create(shared_task=cast.other_task, split="blind_dev")
    Example.objects.create(
        dataset=other,
        external_id="x1",
        text="a secret other sentence",
        label="positive",
        position=0,
    )
    client = staff_organizer(cast)
    page = client.get("/admin/sharedtasks/example/")
    assert b"a secret other sentence" not in page.content
    assert b"I love this movie!" in page.content


def change_form(client, cast) -> dict[str, str]:
    parser = FormFields()
    parser.feed(
        client.get(f"/admin/sharedtasks/sharedtask/{cast.shared_task.pk}/change/").content.decode()
    )
    return parser.fields


def phase_index(fields: dict[str, str], kind: str) -> int:
    return next(
        int(name.split("-")[1])
        for name, value in fields.items()
        if name.endswith("-kind") and value == kind
    )


def test_a_deadline_moved_in_the_admin_is_audited(cast):
    client = staff_organizer(cast)
    fields = change_form(client, cast)
    i = phase_index(fields, "results")
    results = Phase.objects.get(shared_task=cast.shared_task, kind="results")
    new_end = results.ends_at + timedelta(days=3)
    fields[f"phases-{i}-ends_at_0"] = new_end.strftime("%Y-%m-%d")
    fields[f"phases-{i}-ends_at_1"] = new_end.strftime("%H:%M:%S")
    response = client.post(f"/admin/sharedtasks/sharedtask/{cast.shared_task.pk}/change/", fields)
    assert response.status_code == 302, response.content[:3000]
    results.refresh_from_db()
    assert results.ends_at.date() == new_end.date()
    entry = AuditLogEntry.objects.filter(action="phase.update", target="phase:results").get()
    assert entry.actor == cast.organizer
    assert entry.details["via"] == "admin"


def test_the_admin_refuses_overlapping_phases_like_the_api(cast):
    client = staff_organizer(cast)
    fields = change_form(client, cast)
    i = phase_index(fields, "contest")
    results = Phase.objects.get(shared_task=cast.shared_task, kind="results")
    late = results.starts_at + timedelta(days=2)
    fields[f"phases-{i}-ends_at_0"] = late.strftime("%Y-%m-%d")
    fields[f"phases-{i}-ends_at_1"] = late.strftime("%H:%M:%S")
    response = client.post(f"/admin/sharedtasks/sharedtask/{cast.shared_task.pk}/change/", fields)
    assert response.status_code == 200
    assert b"would overlap the results phase" in response.content
    assert not AuditLogEntry.objects.filter(action="phase.update").exists()


def test_a_superuser_sees_every_task(cast):
    from django.contrib.auth import get_user_model
    from django.test import Client

    admin = get_user_model().objects.create_superuser("root", password="pw-root-123")
    client = Client()
    client.force_login(admin)
    page = client.get("/admin/sharedtasks/sharedtask/")
    assert b"SST sentiment" in page.content and b"Other task" in page.content
