"""The organizer's settings page (with presets), the one-form schedule, and the confirmation
before closing a phase early."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from bibi.sharedtasks import services
from bibi.sharedtasks.models import AuditLogEntry, SharedTask
from bibi.tasktypes import TEXT_CLASSIFICATION
from bibi.web.organize_forms import SETTING_GROUPS, TaskSettingsForm

from .conftest import TASK, page_client

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]

SETTINGS = f"{TASK}organize/settings/"
SCHEDULE = f"{TASK}organize/schedule/"


def local(moment) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M")


def form_data(task: SharedTask, **changes) -> dict:
    """The settings form as the page fills it for ``task``, with ``changes``."""
    data = {**TaskSettingsForm.values_of(task), **changes}
    return {
        name: ("on" if value is True else value)
        for name, value in data.items()
        if value is not False
    }


def stored(task: SharedTask) -> SharedTask:
    return SharedTask.objects.get(pk=task.pk)


def test_every_setting_the_api_can_change_is_on_the_page_explained_with_its_default(cast):
    page = page_client(cast, "organizer").get(SETTINGS).content.decode()
    grouped = [name for group in SETTING_GROUPS.values() for name, _ in group]
    assert sorted(grouped) == sorted(services.SHARED_TASK_EDITABLE_FIELDS)
    # A label task's page leaves out what only other types have (a span task's answer rule).
    hidden = TEXT_CLASSIFICATION.hidden_settings()
    assert {"answer_mode", "answer_f1_threshold"} <= hidden
    for name in grouped:
        assert (f'name="{name}"' in page) == (name not in hidden), name
    assert "Default: 0.35." in page  # pair_max_edit_ratio
    assert "Default: Dev accuracy (eq. 1 of the 2017 overview)." in page
    for title, group in SETTING_GROUPS.items():
        shown = any(name not in hidden for name, _ in group)
        assert (f"<legend>{title}</legend>" in page) == shown, title


@pytest.mark.parametrize(
    "name, value, expected",
    [
        ("pair_max_edit_distance", "7", 7),
        ("pair_min_shared_token_ratio", "0.25", 0.25),
        ("break_rate_mode", "sentences", "sentences"),
        ("weight_mode", "none", "none"),
        ("guidance_visibility", "public", "public"),
        ("max_pairs_per_set", "500", 500),
        ("strategy_tags", "negation, irony", ["negation", "irony"]),
        ("description", "New words.", "New words."),
    ],
)
def test_each_setting_is_saved_through_the_service_and_audited(cast, name, value, expected):
    response = page_client(cast, "organizer").post(
        SETTINGS, form_data(cast.shared_task, **{name: value})
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert getattr(stored(cast.shared_task), name) == expected
    entry = AuditLogEntry.objects.filter(action="shared_task.update").get()
    assert list(entry.details) == [name]


def test_a_checkbox_left_empty_turns_its_setting_off(cast):
    data = form_data(cast.shared_task)
    del data["guidance_shows_systems"]
    assert page_client(cast, "organizer").post(SETTINGS, data).status_code == 302
    assert stored(cast.shared_task).guidance_shows_systems is False


def test_refusals_show_beside_their_field_and_change_nothing(cast):
    client = page_client(cast, "organizer")
    labels = client.post(SETTINGS, form_data(cast.shared_task, labels="bad, good"))
    assert labels.status_code == 400
    page = labels.content.decode()
    assert 'id="id_labels_error"' in page
    assert "The label set cannot change once examples have been imported." in page
    ratio = client.post(SETTINGS, form_data(cast.shared_task, pair_max_edit_ratio="1.5"))
    assert ratio.status_code == 400
    assert 'id="id_pair_max_edit_ratio_error"' in ratio.content.decode()
    assert stored(cast.shared_task).labels == ["negative", "positive"]
    assert not AuditLogEntry.objects.filter(action="shared_task.update").exists()


def test_a_preset_fills_the_form_shows_what_changes_and_saves_with_its_name(cast):
    client = page_client(cast, "organizer")
    page = client.get(f"{SETTINGS}?preset=2017-sentiment-replay").content.decode()
    assert "2017 sentiment replay</strong> is filled in below, not saved yet" in page
    assert "Weight mode: dev_accuracy → <strong>original_f1</strong>" in page
    assert stored(cast.shared_task).weight_mode == "dev_accuracy"  # not saved yet
    values = TaskSettingsForm.values_of_preset(services.PRESETS["2017-sentiment-replay"])
    data = form_data(cast.shared_task, **values, preset="2017-sentiment-replay")
    assert client.post(SETTINGS, data).status_code == 302
    task = stored(cast.shared_task)
    assert (task.weight_mode, task.break_rate_mode) == ("original_f1", "sentences")
    entry = AuditLogEntry.objects.filter(action="shared_task.update").get()
    assert entry.details["via"] == "preset:2017-sentiment-replay"
    unknown = client.get(f"{SETTINGS}?preset=nope")
    assert unknown.status_code == 400
    assert "There is no preset" in unknown.content.decode()


@pytest.mark.parametrize(
    "role, status",
    [("builder", 403), ("breaker", 403), ("other_organizer", 403), ("outsider", 403)],
)
def test_only_the_tasks_organizers_see_or_change_its_settings(cast, role, status):
    client = page_client(cast, role)
    for url in (SETTINGS, SCHEDULE):
        assert client.get(url).status_code == status
        assert (
            client.post(url, form_data(cast.shared_task, max_pairs_per_set="1")).status_code
            == status
        )
    assert stored(cast.shared_task).max_pairs_per_set == 10_000


def test_the_schedule_page_plans_all_four_phases_in_one_form(db):
    from ..conftest import build_cast

    cast = build_cast()
    cast.other_task.phases.all().delete()
    client = page_client(cast, "other_organizer")
    start = timezone.now() + timedelta(days=1)
    data = {}
    for kind, days in (("build", 7), ("break", 7), ("contest", 3), ("results", 30)):
        data[f"{kind}_starts_at"] = local(start)
        data[f"{kind}_ends_at"] = local(start + timedelta(days=days))
        start += timedelta(days=days)
    response = client.post("/tasks/other/organize/schedule/", data)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert [p.kind for p in cast.other_task.phases.order_by("starts_at")] == [
        "build", "break", "contest", "results"
    ]  # fmt: skip
    assert (
        AuditLogEntry.objects.filter(shared_task=cast.other_task, action="phase.create").count()
        == 4
    )

    # Saved again unchanged: nothing to do, no audit entry.
    again = client.post("/tasks/other/organize/schedule/", data, follow=True)
    assert "Nothing changed." in again.content.decode()
    assert AuditLogEntry.objects.filter(shared_task=cast.other_task).count() == 5  # + create


def test_the_schedule_refuses_overlaps_and_moving_what_has_happened_all_or_nothing(cast):
    client = page_client(cast, "organizer")
    phases = {p.kind: p for p in cast.shared_task.phases.all()}
    data = {
        f"{k}_{e}": local(getattr(p, e))
        for k, p in phases.items()
        for e in ("starts_at", "ends_at")
    }
    # The break phase started: its start cannot move (the datasets froze then).
    moved = client.post(SCHEDULE, {**data, "break_starts_at": local(timezone.now() + timedelta(hours=2)),
                                   "results_ends_at": local(phases["results"].ends_at + timedelta(days=5))})  # fmt: skip
    assert moved.status_code == 400
    assert "its start can no longer change" in moved.content.decode()
    overlap = client.post(
        SCHEDULE,
        {**data, "results_starts_at": local(phases["contest"].starts_at + timedelta(days=1))},
    )
    assert overlap.status_code == 400
    assert "would overlap" in overlap.content.decode()
    half = client.post(SCHEDULE, {**data, "results_ends_at": ""})
    assert half.status_code == 400
    assert "both a start and an end, or neither" in half.content.decode()
    assert {p.kind: (p.starts_at, p.ends_at) for p in cast.shared_task.phases.all()} == {
        k: (p.starts_at, p.ends_at) for k, p in phases.items()
    }
    assert (
        not AuditLogEntry.objects.filter(action__in=["phase.update", "phase.create"])
        .exclude(details__has_key="starts_at")
        .exists()
    )
    # A later end for the results phase alone: one change, one entry.
    later = client.post(
        SCHEDULE, {**data, "results_ends_at": local(phases["results"].ends_at + timedelta(days=5))}
    )
    assert later.status_code == 302
    assert AuditLogEntry.objects.filter(action="phase.update", target="phase:results").count() == 1


def test_closing_a_phase_now_asks_for_confirmation(cast):
    client = page_client(cast, "organizer")
    page = client.get(f"{TASK}organize/phases/").content.decode()
    assert "Yes, close it now" in page and "cannot be reopened" in page
    unconfirmed = client.post(f"{TASK}organize/phases/break/close-now/", follow=True)
    assert "Nothing was closed" in unconfirmed.content.decode()
    assert cast.shared_task.phase_at().kind == "break"
    assert not AuditLogEntry.objects.filter(action="phase.close_now").exists()
    confirmed = client.post(
        f"{TASK}organize/phases/break/close-now/", {"confirm": "on"}, follow=True
    )
    assert "The break phase is closed" in confirmed.content.decode()
    assert cast.shared_task.phase_at().kind == "contest"


def test_a_refusal_is_summed_up_at_the_top_of_the_form_linking_to_each_field(cast):
    client = page_client(cast, "organizer")
    response = client.post(
        SETTINGS, form_data(cast.shared_task, validations_per_pair="1000", max_pairs_per_set="0")
    )
    assert response.status_code == 400
    page = response.content.decode()
    form = page[page.index('<form method="post"') :]
    summary = form[form.index('id="error-summary"') :]
    # The summary comes before the first field, is focused as the page opens, and links to
    # each field in error (which still shows its own message beside it).
    assert form.index('id="error-summary"') < form.index("<fieldset>")
    assert "autofocus" in form[: form.index('id="error-summary"') + 200]
    summary = summary[: summary.index("</div>")]
    assert "The settings were not saved: 2 problems" in summary
    assert '<a href="#id_validations_per_pair">Votes per pair</a>' in summary
    assert "At most 15: give a number from 1 to 15." in summary
    assert '<a href="#id_max_pairs_per_set">' in summary
    assert 'id="id_validations_per_pair_error"' in page
    assert stored(cast.shared_task).validations_per_pair == 3


def test_every_integer_setting_has_a_real_bound_on_the_page_and_in_the_api(cast):
    from bibi.sharedtasks.models.tasks import SETTING_BOUNDS

    page = page_client(cast, "organizer").get(SETTINGS).content.decode()
    assert "9223372036854775807" not in page and "2147483647" not in page
    assert 'name="validations_per_pair" value="3" min="1" max="15"' in page
    api = cast.client("organizer")
    for name, (low, high) in SETTING_BOUNDS.items():
        assert re.search(rf'name="{name}" value="\d+" min="{low}" max="{high}"', page), name
        for value in (low - 1, high + 1):
            refused = api.patch("/api/v1/shared-tasks/sst/", {name: value}, format="json")
            assert refused.status_code == 400, (name, value)
            assert name in refused.json(), refused.json()
            assert "9223372036854775807" not in refused.content.decode()
        page_refused = page_client(cast, "organizer").post(
            SETTINGS, form_data(cast.shared_task, **{name: str(high + 1)})
        )
        assert page_refused.status_code == 400, name
    assert (
        api.patch(
            "/api/v1/shared-tasks/sst/", {"validations_per_pair": 15}, format="json"
        ).status_code
        == 200
    )
    assert stored(cast.shared_task).validations_per_pair == 15
