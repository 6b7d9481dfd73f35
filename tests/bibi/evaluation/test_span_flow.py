"""A span task (QA-SRL) end to end on real services, with self-reported systems: import ->
blind-dev predictions -> pairs -> pair predictions -> scoring run -> leaderboard (API)."""

from __future__ import annotations

import csv
import io
import json
import zipfile

import pytest
from django.core.files.base import ContentFile
from django.test import Client

from bibi.evaluation import compute, exports, services
from bibi.evaluation.models import Snapshot
from bibi.evaluation.selectors import Names
from bibi.pairs import services as pair_services
from bibi.pairs.selectors import pair_items
from bibi.sharedtasks.importing import examples_import
from bibi.systems import predictions as system_predictions
from bibi.systems import services as system_services

from ...conftest import REPO_ROOT
from ..pairs.conftest import start_phase_now
from ..spancast import SAID, UCD, build_span_cast

pytestmark = pytest.mark.django_db

# Breaker pairs (span_pairs layout): s1 with the answer kept, s2 with the answer moved,
# s3 with the original's answers found again (no variant_answers given).
PAIRS_CSV = (
    "original_id,question,variant_text,variant_answers,tags\n"
    f's1,who beat someone?,"{UCD.replace("UCD", "Kilmacud")}",Kilmacud,semantics\n'
    f's2,,"{UCD.replace("2006 championship", "2007 league")}",the 2007 league,\n'
    f'j3,,"{SAID.replace("He said", "She said")}",,\n'
)


def answers_csv(rows: list[tuple[str, str, str]]) -> bytes:
    lines = ["text,question,answer"]
    lines += [",".join(json.dumps(value) for value in row) for row in rows]
    return "\n".join(lines).encode()


def pairs_predict(cast, strong, weak) -> None:
    """Both systems answer every pair item: the strong one right everywhere, the weak one
    keeping its old answers (it breaks on s1 and s2)."""
    right = {
        (UCD, "who beat someone?"): "UCD",
        (UCD.replace("UCD", "Kilmacud"), "who beat someone?"): "Kilmacud",
        (UCD, "what did someone finish?"): "the 2006 championship",
        (
            UCD.replace("2006 championship", "2007 league"),
            "what did someone finish?",
        ): "the 2007 league",
        (SAID, "what did someone say?"): "that he would return",
        (SAID.replace("He said", "She said"), "what did someone say?"): "he would return",
    }
    # The weak system keeps answering "UCD" for the first pair and the old answer elsewhere.
    weak_answers = dict(right)
    weak_answers[(UCD.replace("UCD", "Kilmacud"), "who beat someone?")] = "St Vincents"
    weak_answers[(UCD.replace("2006 championship", "2007 league"), "what did someone finish?")] = (
        "UCD"
    )
    for system, answers in ((strong, right), (weak, weak_answers)):
        system_predictions.system_predictions_upload(
            system=system,
            actor=cast.builder,
            data=answers_csv([(t, q, a) for (t, q), a in answers.items()]),
            filename="pairs.csv",
            source="pairs",
        )


def scored(cast, strong, weak):
    """The snapshot of a scoring run once both systems answered every pair item."""
    pairs_predict(cast, strong, weak)
    run = services.scoring_run_request(
        shared_task=cast.shared_task, trigger="organizer", send=False
    )
    run = compute.scoring_run_complete(run_id=run.id)
    assert run.status == "done", run.failure_reason
    return run.snapshot


def published(cast, snapshot) -> None:
    """``snapshot`` published, and the task in its results phase (the items visible)."""
    services.snapshot_publish(snapshot=snapshot, actor=cast.organizer)
    start_phase_now(cast.shared_task, "results")


@pytest.fixture
def span_task(db):
    cast = build_span_cast(current_phase="build")
    examples_import(
        shared_task=cast.shared_task,
        split="starter",
        actor=cast.organizer,
        data=(REPO_ROOT / "fixtures" / "qasrl" / "items.jsonl").read_bytes(),
        filename="items.jsonl",
    )
    strong = system_services.system_create(
        team=cast.builder_team, actor=cast.builder, name="strong", kind="self_reported"
    )
    weak = system_services.system_create(
        team=cast.builder_team, actor=cast.builder, name="weak", kind="self_reported"
    )
    # Blind dev: d1 "who was beaten?" -> St Vincents; d2 "who said something?" -> He.
    for system, rows in (
        (strong, "id,answer\nd1,St Vincents\nd2,He\n"),
        (weak, "id,start,end\nd1,0,3\nd2,0,2\n"),
    ):
        system_predictions.system_predictions_upload(
            system=system,
            actor=cast.builder,
            data=rows.encode(),
            filename="dev.csv",
            source="blind_dev",
        )
    start_phase_now(cast.shared_task, "break")
    pair_services.pair_set_upload(
        team=cast.breaker_team,
        user=cast.breaker,
        file=ContentFile(PAIRS_CSV.encode(), name="p.csv"),
    )
    start_phase_now(cast.shared_task, "contest")
    return cast, strong, weak


def test_a_span_task_runs_end_to_end(span_task):
    cast, strong, weak = span_task
    strong.refresh_from_db()
    weak.refresh_from_db()
    assert strong.active_version.dev_accuracy == 1.0
    assert weak.active_version.dev_accuracy == 0.5  # "UCD" for "who was beaten?" is wrong
    assert weak.active_version.dev_token_f1 == pytest.approx(0.5)

    items = pair_items(shared_task=cast.shared_task)
    assert len(items) == 6  # three originals, three variants, each with its question
    released = cast.client("builder").get("/api/v1/shared-tasks/qasrl/pair-texts/")
    assert released.status_code == 200, released.content
    rows = [json.loads(line) for line in released.content.decode().splitlines()]
    assert [(row["text"], row["question"]) for row in rows] == items
    snapshot = scored(cast, strong, weak)
    assert snapshot.settings_used["answer_mode"] == "token_f1"
    assert {row["dev_answer_mode"] for row in snapshot.tables["builders"]} == {"token_f1"}
    builders = {row["system_id"]: row for row in snapshot.tables["builders"]}
    assert builders[strong.id]["breaks"] == 0
    assert builders[strong.id]["accuracy"] == 1.0
    assert builders[weak.id]["breaks"] == 2
    assert builders[weak.id]["accuracy"] == pytest.approx(4 / 6)
    assert builders[weak.id]["f1"] == pytest.approx(4 / 6)
    assert builders[weak.id]["outside_label_set"] == 0
    breaker = snapshot.tables["breakers"][0]
    assert breaker["team_id"] == cast.breaker_team.id

    item = snapshot.items.get(original_id="s1")
    assert item.original_text == UCD and item.original_label == ""
    assert item.span["question"] == "who beat someone?"
    assert item.span["variant_answers"] == [{"start": 0, "end": 8, "text": "Kilmacud"}]
    assert item.span["answers"][str(weak.id)] == ["UCD", "St Vincents"]
    assert item.broken == 1

    published(cast, snapshot)
    board = cast.client("anonymous").get("/api/v1/shared-tasks/qasrl/leaderboard/")
    assert board.status_code == 200, board.content
    rows = cast.client("anonymous").get("/api/v1/shared-tasks/qasrl/leaderboard/items/")
    assert rows.status_code == 200, rows.content
    first = next(row for row in rows.json()["results"] if row["original_id"] == "s1")
    assert first["question"] == "who beat someone?"
    assert first["variant_answers"][0]["text"] == "Kilmacud"
    weak_cell = next(cell for cell in first["predictions"] if cell["system_id"] == weak.id)
    assert (weak_cell["variant"], weak_cell["outcome"]) == ("wrong", "broken")
    assert (weak_cell["original_answer"], weak_cell["variant_answer"]) == ("UCD", "St Vincents")
    grid = cast.client("anonymous").get(
        "/api/v1/shared-tasks/qasrl/leaderboard/items/", {"format": "csv"}
    )
    assert grid.status_code == 200, grid.content
    header = grid.content.decode().splitlines()[0]
    assert "question" in header and "Strawman / weak: answer to variant" in header
    for page in ("/tasks/qasrl/results/", "/tasks/qasrl/results/items/", "/tasks/qasrl/"):
        shown = Client().get(page)
        assert shown.status_code == 200, (page, shown.content.decode()[:3000])
    board_page = Client().get("/tasks/qasrl/results/").content.decode()
    # The dev figures' counting rule and mode, stated beside the weights (issue 33.4).
    assert "data-dev-rule" in board_page and "under token_f1" in board_page
    assert "Each distinct (sentence, question) of the blind dev set counts once" in board_page
    explorer = Client().get("/tasks/qasrl/results/items/").content.decode()
    assert "who beat someone?" in explorer and "“Kilmacud”" in explorer
    assert '“St Vincents” <strong class="verdict-wrong">wrong</strong>' in explorer


def test_the_downloads_of_a_span_task_are_about_answers_not_labels(span_task):
    cast, strong, weak = span_task
    snapshot = scored(cast, strong, weak)
    published(cast, snapshot)
    base = "/tasks/qasrl/results/download/"
    archive = zipfile.ZipFile(io.BytesIO(Client().get(f"{base}results.zip").content))
    files = set(archive.namelist())
    assert {"builders.csv", "breakers.csv", "matrix.csv", "items.csv", "tags.csv"} <= files
    assert not {"flips.csv", "outside_label_set.csv", "validation.csv"} & files
    for table in ("flips", "outside_label_set", "validation"):
        assert Client().get(f"{base}{table}.csv").status_code == 404, table
    api = cast.client("anonymous")
    listed = api.get("/api/v1/shared-tasks/qasrl/leaderboard/").json()["tables"]
    assert "builders" in listed and "items" in listed and "flips" not in listed
    assert api.get("/api/v1/shared-tasks/qasrl/leaderboard/flips/").status_code == 404

    builders = read_csv(archive, "builders.csv")
    assert "outside_label_set" not in builders[0]
    by_system = {row["system"]: row for row in as_dicts(builders)}
    weak_row = by_system["Strawman / weak"]
    assert (weak_row["breaks"], weak_row["broken_pct"]) == ("2", "66.66666666666667")
    assert float(weak_row["f1"]) == pytest.approx(4 / 6)
    assert float(weak_row["accuracy"]) == pytest.approx(4 / 6)
    assert float(by_system["Strawman / strong"]["accuracy"]) == 1.0
    breakers = read_csv(archive, "breakers.csv")
    assert breakers[0] == [
        "rank", "team", "pairs", "score", "broken_pct of Strawman / strong",
        "broken_pct of Strawman / weak",
    ]  # fmt: skip

    items = as_dicts(read_csv(archive, "items.csv"))
    assert not {"original_label", "variant_label", "flipped", "claimed_label"} & set(items[0])
    first = next(row for row in items if row["original_id"] == "s1")
    assert first["question"] == "who beat someone?"
    assert (first["original_answers"], first["variant_answers"]) == ("UCD", "Kilmacud")
    assert first["original_text"] == UCD and first["variant_text"] == UCD.replace("UCD", "Kilmacud")
    weak_cells = [first[f"Strawman / weak: {c}"] for c in SPAN_CELLS]
    assert weak_cells == ["UCD", "right", "St Vincents", "wrong", "broken"]
    strong_cells = [first[f"Strawman / strong: {c}"] for c in SPAN_CELLS]
    assert strong_cells == ["UCD", "right", "Kilmacud", "right", "held"]

    readme = archive.read("README.md").decode()
    assert "answer mode token_f1" in readme and "## flips.csv" not in readme
    assert "its answer to the original, whether that answer is right" in readme


@pytest.mark.parametrize(
    ("settings_used", "kinds"),
    [({"answer_mode": "token_f1"}, ["all"]), ({}, ["all", "same_label", "flipped"])],
)
def test_the_lambda_tables_of_a_span_task_have_no_label_kinds(settings_used, kinds):
    rows = [{"system_id": 1, "kind": kind, "pairs": 2} for kind in ("all", "same_label", "flipped")]
    snapshot = Snapshot(
        settings_used=settings_used,
        tables={"lambda_auc": rows, "lambda_correlation": rows, "lambda_quartiles": rows},
    )
    names = Names(teams={}, systems={1: "T / s"}, system_names={})
    for table in ("lambda_auc", "lambda_correlation", "lambda_quartiles"):
        header, grid = exports.TABLES[table].grid(snapshot, names)
        assert [row[header.index("kind")] for row in grid] == kinds, table
        assert [row["kind"] for row in exports.TABLES[table].as_json(snapshot, names)] == kinds


SPAN_CELLS = ("answer to original", "original", "answer to variant", "variant", "outcome")


def read_csv(archive: zipfile.ZipFile, name: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(archive.read(name).decode())))


def as_dicts(rows: list[list[str]]) -> list[dict[str, str]]:
    return [dict(zip(rows[0], row, strict=True)) for row in rows[1:]]
