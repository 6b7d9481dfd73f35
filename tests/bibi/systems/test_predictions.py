"""Self-reported systems: predictions for the blind dev set, checked for coverage."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import PermissionDenied

from bibi.systems import predictions
from bibi.systems.models import Prediction

from ..conftest import BLIND_DEV

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]

URL = "/api/v1/shared-tasks/sst/systems/{}/predictions/"


def tsv(rows: list[tuple[str, str]]) -> bytes:
    return ("id\tlabel\n" + "".join(f"{i}\t{label}\n" for i, label in rows)).encode()


def upload(cast, system, data: bytes, name: str = "dev.tsv", source: str = "blind_dev", **fields):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return cast.client("builder").post(
        URL.format(system.id),
        {"file": SimpleUploadedFile(name, data), "source": source, **fields},
        format="multipart",
    )


def test_a_complete_file_is_accepted_and_scored(self_reported):
    cast, system = self_reported
    response = upload(
        cast, system, tsv([("d1", "positive"), ("d2", "positive"), ("d3", "positive")])
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["status"] == "ready"
    assert body["dev_accuracy"] == pytest.approx(2 / 3)
    assert body["dev_count"] == 3
    system.refresh_from_db()
    assert system.active_version.number == 1
    assert Prediction.objects.filter(system_version__system=system).count() == 3


def test_a_jsonl_file_in_any_order_is_accepted(self_reported):
    cast, system = self_reported
    lines = [json.dumps({"id": eid, "label": label}) for eid, _, label in reversed(BLIND_DEV)]
    response = upload(cast, system, "\n".join(lines).encode(), name="dev.jsonl")
    assert response.status_code == 201, response.json()
    assert response.json()["dev_accuracy"] == 1.0


def test_every_problem_is_listed_and_nothing_is_stored(self_reported):
    cast, system = self_reported
    rows = [("d1", "positive"), ("d1", "negative"), ("d2", "7"), ("d9", "positive")]
    response = upload(cast, system, tsv(rows))
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert errors == [
        {"line": 0, "reason": "no prediction for id 'd3'"},
        {"line": 3, "reason": "id 'd1' is predicted 'negative' here but 'positive' on line 2"},
        {
            "line": 4,
            "reason": "the label '7' is not one of this task's labels (negative, "
            "positive); give a label map to translate the file's labels, e.g. "
            "0=negative,1=positive",
        },
        {"line": 5, "reason": "id 'd9' is not one of the texts to predict"},
    ]
    assert not system.versions.exists()
    assert not Prediction.objects.exists()


def test_a_missing_text_alone_is_refused(self_reported):
    cast, system = self_reported
    response = upload(cast, system, tsv([("d1", "positive"), ("d2", "negative")]))
    assert response.status_code == 400
    assert response.json()["errors"] == [{"line": 0, "reason": "no prediction for id 'd3'"}]


def test_a_hosted_system_takes_no_predictions(hosted):
    cast, system = hosted
    response = upload(cast, system, tsv([(eid, label) for eid, _, label in BLIND_DEV]))
    assert response.status_code == 400
    assert "This system is hosted" in json.dumps(response.json())


def test_pair_predictions_wait_for_the_break_phase_to_close(self_reported):
    cast, system = self_reported
    response = upload(cast, system, b"text\tlabel\n", name="pairs.tsv", source="pairs")
    assert response.status_code == 400
    assert "is possible once the break phase has closed" in json.dumps(response.json())


def test_the_members_of_another_team_cannot_upload(self_reported):
    cast, system = self_reported
    with pytest.raises(PermissionDenied):
        predictions.system_predictions_upload(
            system=system, actor=cast.breaker, data=tsv([]), filename="x.tsv", source="blind_dev"
        )


def test_a_label_outside_the_task_is_kept_counted_wrong_and_reported(self_reported):
    cast, system = self_reported
    # d1 and d3 are positive, d2 negative (BLIND_DEV): "neutral" on d3 is wrong, never mapped.
    rows = [("d1", "Positive"), ("d2", "NEGATIVE"), ("d3", "neutral")]
    response = upload(cast, system, tsv(rows))
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["dev_accuracy"] == pytest.approx(2 / 3)
    assert body["outside_label_count"] == 1
    stored = dict(Prediction.objects.values_list("example__external_id", "label"))
    assert stored == {"d1": "positive", "d2": "negative", "d3": "neutral"}
    listed = cast.client("builder").get(f"/api/v1/shared-tasks/sst/systems/{system.id}/").json()
    assert listed["versions"][0]["outside_label_count"] == 1


def test_a_file_mostly_outside_the_labels_needs_a_label_map(self_reported):
    cast, system = self_reported
    response = upload(cast, system, tsv([("d1", "neg"), ("d2", "pos"), ("d3", "positive")]))
    assert response.status_code == 400
    (group,) = response.json()["groups"]
    assert (group["kind"], group["count"]) == ("label", 2)
    assert not Prediction.objects.exists()


def test_an_identical_re_upload_is_refused_and_not_counted(self_reported):
    cast, system = self_reported
    data = tsv([("d1", "negative"), ("d2", "positive"), ("d3", "positive")])
    assert upload(cast, system, data).status_code == 201
    again = upload(cast, system, data, name="renamed.tsv")
    assert again.status_code == 400
    assert "identical to the blind-dev predictions of version 1" in again.json()["detail"]
    assert system.versions.count() == 1
    changed = upload(cast, system, data.replace(b"d3\tpositive", b"d3\tnegative"))
    assert changed.status_code == 201
    assert system.versions.count() == 2


def test_missing_predictions_are_summarised_as_one_count(self_reported):
    cast, system = self_reported
    response = upload(cast, system, tsv([("d1", "negative")]))
    assert response.status_code == 400
    (group,) = response.json()["groups"]
    assert (group["reason"], group["count"], group["lines"]) == (
        "2 of 3 texts have no prediction",
        2,
        "",
    )


# --- Formats: chosen, or judged by the content (never by the name, which 2017 files ignore) --

DEV_2017 = "".join(f"{label}\t{text}\n" for _, text, label in BLIND_DEV)


@pytest.mark.parametrize(
    ("name", "data", "fmt"),
    [
        # A 2017 builder's files, named as they were: label<TAB>sentence, no header.
        ("team.non_neural", DEV_2017, ""),
        ("team.predictions", DEV_2017, "2017"),
        # A label per line, the blind dev texts in order.
        ("team.opinion", "positive\nnegative\npositive\n", ""),
        ("team.opinion", "positive\nnegative\npositive\n", "2017"),
        # Files with a header, whatever their name.
        ("predictions.out", "id,label\nd1,positive\nd2,negative\nd3,positive\n", ""),
        ("predictions.out", "id\tlabel\nd1\tpositive\nd2\tnegative\nd3\tpositive\n", "tsv"),
        (
            "p.txt",
            '{"id": "d1", "label": "positive"}\n{"id": "d2", "label": "negative"}\n'
            '{"id": "d3", "label": "positive"}\n',
            "",
        ),
    ],
)
def test_a_file_is_read_by_its_content_or_its_chosen_format_not_its_name(
    self_reported, name, data, fmt
):
    cast, system = self_reported
    fields = {"format": fmt} if fmt else {}
    response = upload(cast, system, data.encode(), name=name, **fields)
    assert response.status_code == 201, response.json()
    assert response.json()["dev_accuracy"] == 1.0


def test_a_file_without_a_header_row_is_refused_as_such(self_reported):
    cast, system = self_reported
    headerless = b"d1,positive\nd2,negative\nd3,positive\n"
    for data, fields in [
        (headerless, {}),
        (headerless, {"format": "csv"}),
        (DEV_2017.encode(), {"format": "tsv"}),
    ]:
        response = upload(cast, system, data, name="dev.csv", **fields)
        assert response.status_code == 400, response.json()
        (error,) = response.json()["errors"]
        assert error["reason"].startswith("no header row: the first line ("), error
        assert "choose the 2017 layout" in error["reason"]
        assert "without an" not in json.dumps(response.json())
    assert not system.versions.exists()


def test_the_2017_layout_refuses_a_file_with_a_header(self_reported):
    cast, system = self_reported
    response = upload(cast, system, tsv([("d1", "positive")]), format="2017")
    assert response.status_code == 400
    assert "is a header row, but a file in the 2017 layout has none" in json.dumps(response.json())


def test_an_identical_repeat_counts_once_and_a_conflicting_one_is_refused(self_reported):
    cast, system = self_reported
    rows = [("d1", "positive"), ("d2", "negative"), ("d1", "Positive"), ("d3", "positive")]
    response = upload(cast, system, tsv(rows))
    assert response.status_code == 201, response.json()
    assert response.json()["repeated_predictions"] == 1
    assert response.json()["dev_count"] == 3
    conflicting = upload(cast, system, tsv([*rows[:3], ("d3", "positive"), ("d2", "positive")]))
    assert conflicting.status_code == 400
    assert conflicting.json()["errors"] == [
        {"line": 6, "reason": "id 'd2' is predicted 'positive' here but 'negative' on line 3"}
    ]


def test_a_span_task_counts_an_identical_repeat_once_and_refuses_another_answer(db):
    from bibi.systems import services as system_services
    from bibi.systems.errors import PredictionsRejected

    from ..spancast import build_span_cast

    cast = build_span_cast(current_phase="build")
    system = system_services.system_create(
        team=cast.builder_team, actor=cast.builder, name="by hand", kind="self_reported"
    )

    def send(rows: str):
        return predictions.system_predictions_upload(
            system=system,
            actor=cast.builder,
            data=rows.encode(),
            filename="dev.csv",
            source="blind_dev",
        )

    with pytest.raises(PredictionsRejected) as refused:
        send("id,answer\nd1,St Vincents\nd2,He\nd1,UCD\n")
    assert [error.reason for error in refused.value.errors] == [
        "'d1' is answered 'UCD' here but 'St Vincents' on line 2"
    ]
    version = send("id,answer\nd1,St Vincents\nd2,He\nd1,St Vincents\n")
    assert (version.repeated_predictions, version.dev_count) == (1, 2)


@pytest.mark.parametrize("place", ["x", "0", "-1", "4", "²"])
def test_a_position_column_that_names_no_text_is_refused_not_a_crash(self_reported, place):
    cast, system = self_reported
    response = upload(cast, system, f"position,label\n{place},positive\n".encode(), name="p.csv")
    assert response.status_code == 400, response.content
    assert not system.versions.exists()
