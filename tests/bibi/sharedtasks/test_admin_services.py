"""The admin writes through the services (issue 22.4): a save in the admin leaves the same
rows and audit entries as the same change made through the services, plus ``via: admin``."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model

from bibi.sharedtasks import services
from bibi.sharedtasks.models import AuditLogEntry, Organizer, Phase, SharedTask

from .test_admin import FormFields, change_form, phase_index, staff_organizer

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]


def entry(action: str, target: str) -> AuditLogEntry:
    return AuditLogEntry.objects.filter(action=action, target=target).latest("id")


def without_via(details: dict) -> dict:
    assert details.pop("via") == "admin"
    return details


def admin_post(client, cast, fields):
    url = f"/admin/sharedtasks/sharedtask/{cast.shared_task.pk}/change/"
    return client.post(url, fields)


def set_moment(fields, name: str, moment) -> None:
    fields[f"{name}_0"] = moment.strftime("%Y-%m-%d")
    fields[f"{name}_1"] = moment.strftime("%H:%M:%S")


def test_a_phase_moved_in_the_admin_is_audited_as_the_service_audits_it(cast):
    client = staff_organizer(cast)
    results = Phase.objects.get(shared_task=cast.shared_task, kind="results")
    before = results.ends_at
    fields = change_form(client, cast)
    set_moment(
        fields, f"phases-{phase_index(fields, 'results')}-ends_at", before + timedelta(days=3)
    )
    assert admin_post(client, cast, fields).status_code == 302
    by_admin = entry("phase.update", "phase:results")
    results.refresh_from_db()
    moved = results.ends_at
    assert moved.date() == (before + timedelta(days=3)).date()

    services.phase_update(
        phase=results,
        actor=cast.organizer,
        starts_at=results.starts_at,
        ends_at=moved + timedelta(days=1),
    )
    by_service = entry("phase.update", "phase:results")
    assert by_admin.id != by_service.id and by_admin.actor == by_service.actor == cast.organizer
    admin_details = without_via(by_admin.details)
    assert admin_details.keys() == by_service.details.keys() == {"from", "to"}
    assert admin_details["from"]["ends_at"] == before.isoformat()
    assert admin_details["to"] == by_service.details["from"]
    assert AuditLogEntry.objects.filter(action="phase.update").count() == 2


def test_a_phase_created_in_the_admin_is_audited_as_the_service_audits_it(cast):
    results = Phase.objects.get(shared_task=cast.shared_task, kind="results")
    results.delete()
    client = staff_organizer(cast)
    fields = change_form(client, cast)
    n = int(fields["phases-TOTAL_FORMS"])
    fields["phases-TOTAL_FORMS"] = str(n + 1)
    fields[f"phases-{n}-kind"] = "results"
    fields[f"phases-{n}-shared_task"] = str(cast.shared_task.pk)
    # A day later: the admin's widgets drop the microseconds the contest phase ends with.
    set_moment(fields, f"phases-{n}-starts_at", results.starts_at + timedelta(days=1))
    set_moment(fields, f"phases-{n}-ends_at", results.ends_at)
    assert admin_post(client, cast, fields).status_code == 302
    by_admin = without_via(entry("phase.create", "phase:results").details)

    created = Phase.objects.get(shared_task=cast.shared_task, kind="results")
    created.delete()
    services.phase_create(
        shared_task=cast.shared_task,
        actor=cast.organizer,
        kind="results",
        starts_at=created.starts_at,
        ends_at=created.ends_at,
    )
    assert by_admin == entry("phase.create", "phase:results").details


def test_a_task_changed_in_the_admin_is_audited_as_the_service_audits_it(cast):
    client = staff_organizer(cast)
    fields = change_form(client, cast)
    fields["description"] = "Changed in the admin."
    fields["max_pairs_per_set"] = "7"
    assert admin_post(client, cast, fields).status_code == 302
    by_admin = without_via(entry("shared_task.update", "shared_task:sst").details)
    assert by_admin["description"]["to"] == "Changed in the admin."

    cast.shared_task.refresh_from_db()
    services.shared_task_update(
        shared_task=cast.shared_task,
        actor=cast.organizer,
        description=by_admin["description"]["from"],
        max_pairs_per_set=by_admin["max_pairs_per_set"]["from"],
    )
    by_service = entry("shared_task.update", "shared_task:sst").details
    assert by_service == {
        field: {"from": change["to"], "to": change["from"]} for field, change in by_admin.items()
    }


def test_the_admin_refuses_a_new_label_set_once_examples_are_in_as_the_service_does(cast):
    client = staff_organizer(cast)
    fields = change_form(client, cast)
    fields["labels"] = '["negative", "neutral", "positive"]'
    response = admin_post(client, cast, fields)
    assert response.status_code == 200
    assert "The label set cannot change once examples have been imported." in (
        response.content.decode()
    )
    cast.shared_task.refresh_from_db()
    assert cast.shared_task.labels == ["negative", "positive"]
    assert not AuditLogEntry.objects.filter(action="shared_task.update").exists()


def test_a_task_added_in_the_admin_has_its_creator_as_organizer_and_one_audit_entry(cast):
    client = staff_organizer(cast)
    parser = FormFields()
    parser.feed(client.get("/admin/sharedtasks/sharedtask/add/").content.decode())
    fields = parser.fields
    fields.update(name="Added in the admin", slug="added", labels='["no", "yes"]')
    response = client.post("/admin/sharedtasks/sharedtask/add/", fields)
    assert response.status_code == 302, response.content[:3000]
    task = SharedTask.objects.get(slug="added")
    assert list(task.organizer_set.values_list("user", flat=True)) == [cast.organizer.id]
    created = AuditLogEntry.objects.get(shared_task=task)
    assert (created.action, created.target, created.actor) == (
        "shared_task.create",
        "shared_task:added",
        cast.organizer,
    )
    assert created.details == {"via": "admin"}


def test_an_organizer_added_in_the_admin_is_audited_and_a_team_member_is_refused(cast):
    colleague = get_user_model().objects.create_user("colleague", password="pw-colleague-1")
    client = staff_organizer(cast)
    fields = change_form(client, cast)
    n = int(fields["organizer_set-TOTAL_FORMS"])
    fields["organizer_set-TOTAL_FORMS"] = str(n + 1)
    fields[f"organizer_set-{n}-user"] = str(cast.builder.pk)
    fields[f"organizer_set-{n}-shared_task"] = str(cast.shared_task.pk)
    response = admin_post(client, cast, fields)
    assert response.status_code == 200
    assert "cannot also organize it" in response.content.decode()

    fields[f"organizer_set-{n}-user"] = str(colleague.pk)
    assert admin_post(client, cast, fields).status_code == 302
    assert Organizer.objects.filter(shared_task=cast.shared_task, user=colleague).exists()
    added = entry("organizer.add", "user:colleague")
    assert added.actor == cast.organizer


def test_a_team_renamed_in_the_admin_follows_the_name_rule(cast):
    client = staff_organizer(cast)
    url = f"/admin/sharedtasks/team/{cast.builder_team.pk}/change/"
    parser = FormFields()
    parser.feed(client.get(url).content.decode())
    fields = parser.fields
    fields["name"] = "Utr\u0435cht"  # a Cyrillic "е"
    response = client.post(url, fields)
    assert response.status_code == 200
    assert "U+0435 CYRILLIC SMALL LETTER IE" in response.content.decode()
    fields["name"] = "UTRECHT\u0301"
    assert "looks like &#x27;Utrecht&#x27;" in client.post(url, fields).content.decode()
    fields["name"] = "\uff33trawman Two"
    assert client.post(url, fields).status_code == 302
    cast.builder_team.refresh_from_db()
    assert cast.builder_team.name == "Strawman Two"
