"""The admin's "Import examples" page on a shared task."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from bibi.sharedtasks.models import Dataset

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]


@pytest.fixture
def cast(cast_building):
    """Imports into every split happen before the break phase starts."""
    return cast_building


FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "import"


@pytest.fixture
def staff(cast, client):
    """Log ``who`` into the admin as staff: being an organizer is then what decides."""

    def login(who: str):
        user = getattr(cast, who)
        user.is_staff = True
        user.save(update_fields=["is_staff"])
        client.force_login(user)
        return client

    return login


def import_url(cast) -> str:
    return reverse("admin:sharedtasks_sharedtask_import_examples", args=[cast.shared_task.pk])


def upload(name: str, content: bytes, **fields) -> dict:
    return {
        "split": "train",
        "file": SimpleUploadedFile(name, content),
        "file_format": "",
        "label_map": "",
        "id_column": "id",
        "text_column": "text",
        "label_column": "label",
        **fields,
    }


def test_the_task_page_links_to_the_import_page(cast, staff):
    cast.organizer.is_superuser = True
    cast.organizer.save(update_fields=["is_superuser"])
    page = staff("organizer").get(
        reverse("admin:sharedtasks_sharedtask_change", args=[cast.shared_task.pk])
    )
    assert import_url(cast) in page.content.decode()


def test_an_organizer_sees_the_form(cast, staff):
    page = staff("organizer").get(import_url(cast))
    assert page.status_code == 200
    assert b'name="label_map"' in page.content


def test_an_organizer_imports_a_file_and_is_sent_back_to_the_task(cast, staff):
    cast.organizer.is_superuser = True
    cast.organizer.save(update_fields=["is_superuser"])
    data = (FIXTURES / "reviews.cp1252.csv").read_bytes()
    response = staff("organizer").post(
        import_url(cast), upload("reviews.cp1252.csv", data), follow=True
    )
    assert response.redirect_chain[-1][0] == reverse(
        "admin:sharedtasks_sharedtask_change", args=[cast.shared_task.pk]
    )
    assert "Imported 6 examples into the train dataset from reviews.cp1252.csv (csv, cp1252)." in [
        str(message) for message in response.context["messages"]
    ]
    assert cast.train.examples.count() == 2 + 6


def test_an_organizer_without_admin_rights_on_tasks_comes_back_to_the_import_page(cast, staff):
    data = (FIXTURES / "reviews.utf8.csv").read_bytes()
    response = staff("organizer").post(import_url(cast), upload("reviews.utf8.csv", data))
    assert response["Location"] == import_url(cast)
    assert cast.train.examples.count() == 2 + 6


def test_a_label_map_and_a_split_come_from_the_form(cast, staff):
    data = (FIXTURES / "reviews.sst2.txt").read_bytes()
    staff("organizer").post(
        import_url(cast),
        upload("reviews.sst2.txt", data, split="starter", label_map="0=negative,1=positive"),
    )
    assert cast.starter.examples.filter(external_id="1", label="positive").exists()


def test_a_rejected_file_lists_every_bad_row_and_stores_nothing(cast, staff):
    data = b"id,text,label\nx1,fine,positive\nx2,,positive\nx3,odd,neutral\nt1,again,negative\n"
    page = staff("organizer").post(import_url(cast), upload("train.csv", data))
    assert page.status_code == 200
    html = page.content.decode()
    assert "Nothing was imported: 3 problems in the file" in html
    assert "<td>3</td><td>the text is empty</td>" in html
    assert "<td>4</td><td>the label &#x27;neutral&#x27; is not one of" in html
    assert "<td>5</td><td>the id &#x27;t1&#x27; is already in the train dataset</td>" in html
    assert cast.train.examples.count() == 2


def test_a_rejected_file_for_a_new_split_leaves_no_dataset(cast, staff):
    cast.train.delete()
    staff("organizer").post(import_url(cast), upload("train.csv", b"id,text,label\nx1,,positive\n"))
    assert not Dataset.objects.filter(shared_task=cast.shared_task, split="train").exists()


def test_a_label_map_naming_an_unknown_label_is_shown_on_its_field(cast, staff):
    page = staff("organizer").post(
        import_url(cast), upload("train.csv", b"id,text,label\nx1,a,2\n", label_map="2=neutral")
    )
    assert page.status_code == 200
    assert "which is not one of this task" in page.context["form"].errors["label_map"][0]


def test_a_label_map_that_is_not_pairs_is_a_form_error(cast, staff):
    page = staff("organizer").post(
        import_url(cast), upload("train.csv", b"id,text,label\n", label_map="0:negative")
    )
    assert "not a label mapping" in page.context["form"].errors["label_map"][0]


@pytest.mark.parametrize("who", ["other_organizer", "builder", "outsider"])
def test_staff_who_do_not_organize_the_task_are_refused(cast, staff, who):
    # To staff who do not organize it, the task does not exist in the admin at all.
    client = staff(who)
    assert client.get(import_url(cast)).status_code == 404
    response = client.post(import_url(cast), upload("train.csv", b"id,text,label\nx1,a,positive\n"))
    assert response.status_code == 404
    assert cast.train.examples.count() == 2


def test_anonymous_visitors_are_sent_to_the_admin_login(cast, client):
    response = client.get(import_url(cast))
    assert response.status_code == 302
    assert reverse("admin:login") in response["Location"]


def test_a_file_over_the_limit_is_refused_with_the_limit_and_stores_nothing(cast, staff, settings):
    settings.EXAMPLES_UPLOAD_MAX_BYTES = 1000
    data = b"id,text,label\n" + b"x1,a fine film,positive\n" * 5000
    page = staff("organizer").post(import_url(cast), upload("train.csv", data))
    assert page.status_code == 413
    assert "The examples file is larger than the limit of 1,000 bytes." in page.content.decode()
    assert b'name="label_map"' in page.content
    assert cast.train.examples.count() == 2


def test_the_import_page_still_checks_the_csrf_token(cast):
    from django.test import Client

    cast.organizer.is_staff = True
    cast.organizer.save(update_fields=["is_staff"])
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(cast.organizer)
    data = (FIXTURES / "reviews.utf8.csv").read_bytes()
    forged = browser.post(import_url(cast), upload("reviews.utf8.csv", data))
    assert forged.status_code == 403
    assert cast.train.examples.count() == 2
    token = browser.get(import_url(cast)).context["csrf_token"]
    sent = browser.post(
        import_url(cast), upload("reviews.utf8.csv", data, csrfmiddlewaretoken=str(token))
    )
    assert sent.status_code == 302
    assert cast.train.examples.count() == 2 + 6
