"""Builder pages: systems, hosted uploads (with the JSON answer the progress bar reads),
self-reported predictions with every row error, versions, failures in plain words."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from bibi.systems.models import System, SystemVersion

from ..conftest import build_cast
from ..systems.conftest import TINY_MODELS, archive_upload
from .conftest import SECRET_FAILURE, SECRET_SYSTEM, TASK, page_client

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]


@pytest.fixture
def building(db):
    """The cast in the build phase, its builders with one hosted and one self-reported system."""
    cast = build_cast(current_phase="build")
    client = page_client(cast, "builder")
    client.post(f"{TASK}systems/create/", {"name": "cnn", "kind": "hosted"})
    client.post(f"{TASK}systems/create/", {"name": "by hand", "kind": "self_reported"})
    return cast, client, System.objects.get(name="cnn"), System.objects.get(name="by hand")


def test_a_builder_creates_systems_and_lists_them(building):
    cast, client, hosted, reported = building
    html = client.get(f"{TASK}systems/").content.decode()
    assert f'href="{TASK}systems/{hosted.id}/"' in html
    assert f'href="{TASK}systems/{reported.id}/"' in html
    again = client.post(f"{TASK}systems/create/", {"name": "CNN", "kind": "hosted"})
    assert again.status_code == 400
    assert "The team already has a system named &#x27;CNN&#x27;." in again.content.decode()


def test_a_hosted_upload_queues_a_version_that_the_page_follows(building):
    cast, client, hosted, _ = building
    response = client.post(
        f"{TASK}systems/{hosted.id}/versions/",
        {"archive": archive_upload(TINY_MODELS / "tiny-bow"), "label_mapping": ""},
    )
    assert response["Location"] == f"{TASK}systems/{hosted.id}/"
    version = hosted.versions.get()
    assert version.status == SystemVersion.Status.QUEUED
    page = client.get(response["Location"]).content.decode()
    assert "Version 1 is uploaded and queued" in page
    # The page asks the API for the status while a version is pending.
    assert f'data-poll-url="/api/v1/shared-tasks/sst/systems/{hosted.id}/"' in page
    assert 'data-version-status="1">Queued<' in page


def test_the_progress_bar_gets_json_with_where_to_go_or_what_went_wrong(building, settings):
    cast, client, hosted, _ = building
    url = f"{TASK}systems/{hosted.id}/versions/"
    ok = client.post(
        url, {"archive": archive_upload(TINY_MODELS / "tiny-bow")}, HTTP_ACCEPT="application/json"
    )
    assert ok.status_code == 200
    assert ok.json() == {"location": f"{TASK}systems/{hosted.id}/"}

    settings.SYSTEM_UPLOAD_MAX_BYTES = 1000
    refused = client.post(
        url, {"archive": archive_upload(TINY_MODELS / "tiny-bow")}, HTTP_ACCEPT="application/json"
    )
    assert refused.status_code == 413
    assert refused.json() == {
        "errors": ["The model archive is larger than the limit of 1,000 bytes."]
    }
    assert hosted.versions.count() == 1


def test_an_oversized_archive_is_refused_on_the_page_and_nothing_is_kept(building, settings):
    cast, client, hosted, _ = building
    settings.SYSTEM_UPLOAD_MAX_BYTES = 1000
    response = client.post(
        f"{TASK}systems/{hosted.id}/versions/",
        {"archive": archive_upload(TINY_MODELS / "tiny-bow")},
        follow=True,
    )
    assert response.redirect_chain == [(f"{TASK}systems/{hosted.id}/", 302)]
    assert "The model archive is larger than the limit of 1,000 bytes." in (
        response.content.decode()
    )
    assert not hosted.versions.exists()


@pytest.mark.parametrize(
    ("setting", "url", "field", "what", "back"),
    [
        ("PAIR_SET_UPLOAD_MAX_BYTES", "pairs/upload/", "file", "pair-set file", "pairs/"),
        (
            "EXAMPLES_UPLOAD_MAX_BYTES",
            "organize/datasets/import/",
            "file",
            "examples file",
            "organize/datasets/",
        ),
    ],
)
def test_every_upload_is_cut_off_at_its_limit(scene, settings, setting, url, field, what, back):
    setattr(settings, setting, 100)
    role = "breaker" if url.startswith("pairs") else "organizer"
    data = {field: SimpleUploadedFile("big.csv", b"original_id,variant_text\n" + b"x" * 5000)}
    if role == "organizer":
        data["split"] = "train"
    response = page_client(scene.cast, role).post(f"{TASK}{url}", data, follow=True)
    assert response.redirect_chain == [(f"{TASK}{back}", 302)]
    assert f"The {what} is larger than the limit of 100 bytes." in response.content.decode()


def test_an_upload_after_the_build_phase_says_when_it_closed(scene):
    client = page_client(scene.cast, "builder")
    response = client.post(
        f"{TASK}systems/{scene.system.id}/versions/",
        {"archive": archive_upload(TINY_MODELS / "tiny-bow")},
    )
    assert response.status_code == 400
    assert "The build phase closed at" in response.content.decode()
    assert scene.system.versions.count() == 2


def test_the_system_page_explains_a_failure_and_shows_the_ready_version(scene):
    html = (
        page_client(scene.cast, "builder").get(f"{TASK}systems/{scene.system.id}/").content.decode()
    )
    assert f"<h1>{SECRET_SYSTEM}</h1>" in html
    assert "The model&#x27;s labels could not be matched with the task&#x27;s." in html
    assert SECRET_FAILURE in html
    assert "What to do: Name the labels in the model&#x27;s config as the task does" in html
    assert "Dev accuracy</dt><dd>87.5% on 3 blind dev texts" in html
    assert "data-poll-url" not in html


def test_a_builder_activates_another_ready_version(scene):
    third = SystemVersion.objects.create(
        system=scene.system, number=3, status=SystemVersion.Status.READY, dev_accuracy=0.9
    )
    client = page_client(scene.cast, "builder")
    client.post(f"{TASK}systems/{scene.system.id}/versions/3/activate/")
    scene.system.refresh_from_db()
    assert scene.system.active_version == third
    refused = client.post(f"{TASK}systems/{scene.system.id}/versions/2/activate/", follow=True)
    assert "Version 2 is failed; only a ready version can be active." in refused.content.decode()
    scene.system.refresh_from_db()
    assert scene.system.active_version == third


def post_dev_predictions(client, system: System, rows: str, **extra):
    return client.post(
        f"{TASK}systems/{system.id}/predictions/",
        {"file": SimpleUploadedFile("dev.csv", rows.encode()), "source": "blind_dev"},
        **extra,
    )


def test_self_reported_predictions_with_bad_rows_are_listed_by_line(building):
    cast, client, _, reported = building
    response = post_dev_predictions(client, reported, "id,label\nd1,positive\nd2,2\nd9,negative\n")
    assert response.status_code == 400
    html = response.content.decode()
    assert "Nothing was stored: 3 problem(s) in dev.csv." in html
    assert "id &#x27;d9&#x27; is not one of the texts to predict" in html
    assert "no prediction for id &#x27;d3&#x27;" in html
    assert '<td class="num">3</td><td>the label &#x27;2&#x27;' in html
    # By kind: one count for every text without a prediction, not one group per id.
    assert "1 of 3 texts have no prediction" in html
    assert not reported.versions.exists()


def test_self_reported_predictions_make_a_version(building):
    cast, client, _, reported = building
    rows = "id,label\nd1,positive\nd2,negative\nd3,negative\n"
    response = post_dev_predictions(client, reported, rows, follow=True)
    page = response.content.decode()
    assert "The predictions are stored in version 1." in page
    # The page says when the pair texts are to be predicted: the pair-prediction window.
    break_end = cast.shared_task.phases.get(kind="break").ends_at
    assert f"From {break_end:%Y-%m-%d %H:%M:%S} UTC to " in page
    reported.refresh_from_db()
    assert reported.active_version.dev_accuracy == pytest.approx(2 / 3)


def test_breakers_have_no_systems_page(scene):
    response = page_client(scene.cast, "breaker").get(f"{TASK}systems/")
    assert response.status_code == 403
    assert "This page is for builder teams; your team, Utrecht, is a breaker team." in (
        response.content.decode()
    )


@pytest.mark.embedded
def test_every_failure_reason_is_explained_in_plain_words_with_what_to_do():
    from bibi.systems.models import SystemVersion
    from bibi.web.failures import failure_help

    for reason in SystemVersion.FailureReason.values:
        help_text = failure_help(reason)
        assert help_text is not None, reason
        assert help_text.what_happened and help_text.what_to_do


def test_the_upload_message_says_what_became_of_the_version(building):
    from bibi.web.views.builders import _uploaded_message

    cast, client, hosted, _ = building
    client.post(
        f"{TASK}systems/{hosted.id}/versions/",
        {"archive": archive_upload(TINY_MODELS / "tiny-bow"), "label_mapping": ""},
    )
    version = hosted.versions.get()
    expected = {
        "queued": "Version 1 is uploaded and queued: this page follows its validation.",
        "running": "Version 1 is uploaded and being validated: this page follows it.",
        "ready": "Version 1 is uploaded and validated already: it is ready.",
        "failed": "Version 1 is uploaded and validated already: it was refused, for the reason below.",
    }
    for status, message in expected.items():
        # As the embedded backend or a quick worker leaves it before the page is answered.
        SystemVersion.objects.filter(id=version.id).update(status=status)
        assert _uploaded_message(version) == message


def test_the_predictions_form_offers_a_format_and_takes_2017_files_by_their_content(building):
    cast, client, _, reported = building
    form = client.get(f"{TASK}systems/{reported.id}/").content.decode()
    assert '<select name="format"' in form
    assert '<option value="2017">The 2017 layout' in form
    assert 'name="file" multiple' in form
    # A 2017 file under its own name: label<TAB>sentence, no header, judged by its content.
    rows = (
        "positive\ta gripping , beautifully acted film .\n"
        "negative\tone long string of cliches .\n"
        "positive\tthe plot is thin but the jokes land .\n"
        "positive\ta gripping , beautifully acted film .\n"
    )
    response = client.post(
        f"{TASK}systems/{reported.id}/predictions/",
        {"file": SimpleUploadedFile("team.non_neural", rows.encode()), "source": "blind_dev"},
        follow=True,
    )
    page = response.content.decode()
    assert "The predictions are stored in version 1." in page, page
    assert "1 row repeats a prediction with the same answer" in page
    reported.refresh_from_db()
    assert reported.active_version.dev_accuracy == 1.0


def test_a_headerless_csv_is_refused_for_its_missing_header(building):
    cast, client, _, reported = building
    response = post_dev_predictions(client, reported, "d1,positive\nd2,negative\nd3,positive\n")
    assert response.status_code == 400
    html = response.content.decode()
    assert "no header row: the first line (&#x27;d1,positive&#x27;)" in html
    assert "without an" not in html
    assert not reported.versions.exists()


def test_several_files_chosen_in_the_form_make_one_upload(building):
    cast, client, _, reported = building
    response = client.post(
        f"{TASK}systems/{reported.id}/predictions/",
        {
            "file": [
                SimpleUploadedFile("a.csv", b"id,label\nd1,positive\nd2,negative\n"),
                SimpleUploadedFile("b.csv", b"id,label\nd2,negative\nd3,positive\n"),
            ],
            "source": "blind_dev",
        },
        follow=True,
    )
    assert "The predictions are stored in version 1." in response.content.decode()
    reported.refresh_from_db()
    assert reported.active_version.dev_count == 3
    assert reported.active_version.archive_name == "a.csv, b.csv"
