"""A span task (QA-SRL) end to end on real services, with self-reported systems: import ->
blind-dev predictions -> pairs -> pair predictions -> scoring run -> leaderboard (API)."""

from __future__ import annotations

import json

import pytest
from django.core.files.base import ContentFile
from django.test import Client

from bibi.evaluation import compute, services
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
    pairs_predict(cast, strong, weak)

    run = services.scoring_run_request(
        shared_task=cast.shared_task, trigger="organizer", send=False
    )
    run = compute.scoring_run_complete(run_id=run.id)
    assert run.status == "done", run.failure_reason
    snapshot = run.snapshot
    assert snapshot.settings_used["answer_mode"] == "token_f1"
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

    services.snapshot_publish(snapshot=snapshot, actor=cast.organizer)
    start_phase_now(cast.shared_task, "results")
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
    explorer = Client().get("/tasks/qasrl/results/items/").content.decode()
    assert "who beat someone?" in explorer and "“Kilmacud”" in explorer
    assert '“St Vincents” <strong class="verdict-wrong">wrong</strong>' in explorer
