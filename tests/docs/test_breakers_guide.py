"""docs/breakers.md's examples, submitted through the real API: the accepted ones are taken,
the refused ones answer exactly what the page shows."""

from __future__ import annotations

import csv
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from bibi.sharedtasks.models import Example

from ..bibi.conftest import build_cast
from .conftest import FIXTURES, CodeBlock, code_blocks

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]

BLOCKS = code_blocks("breakers.md")
ACCEPTED = [b for b in BLOCKS if b.options.get("example") == "accepted"]
REFUSED = [b for b in BLOCKS if b.options.get("example") == "refused"]
ANSWERS = {b.options["answer"]: b for b in BLOCKS if "answer" in b.options}


def _name(block: CodeBlock) -> str:
    return block.options.get("file", f"{block.language}-line-{block.line}")


@pytest.fixture
def breaker(db):
    """The cast in its break phase, its starter set the guide's; the breaker's API client."""
    cast = build_cast(current_phase="break")
    cast.starter.examples.all().delete()
    with (FIXTURES / "starter.csv").open(encoding="utf-8") as handle:
        Example.objects.bulk_create(
            Example(
                dataset=cast.starter,
                external_id=row["id"],
                text=row["text"],
                label=row["label"],
                position=i,
            )
            for i, row in enumerate(csv.DictReader(handle))
        )
    return cast.client("breaker"), f"/api/v1/shared-tasks/{cast.shared_task.slug}/pair-sets/"


def _submit(client, url: str, block: CodeBlock):
    if block.language == "json":
        return client.post(url, json.loads(block.text), format="json")
    data = {"file": SimpleUploadedFile(block.options["file"], block.text.encode("utf-8"))}
    if "label_map" in block.options:
        data["label_map"] = block.options["label_map"]
    return client.post(url, data, format="multipart")


def _pair_count(block: CodeBlock) -> int:
    if block.language == "json":
        return len(json.loads(block.text)["pairs"])
    rows = [line for line in block.text.splitlines() if line.strip()]
    if block.language == "jsonl":
        return len(rows)
    data_rows = len(rows) - 1
    return data_rows // 2 if "sentence_id" in rows[0] else data_rows


def test_the_guides_starter_set_is_the_fixture():
    (starter,) = [b for b in BLOCKS if b.options.get("data") == "starter"]
    assert starter.text == (FIXTURES / "starter.csv").read_text(encoding="utf-8")


def test_the_first_pairs_example_is_the_sessions_pair_file():
    assert ACCEPTED[0].text == (FIXTURES / "pairs.csv").read_text(encoding="utf-8")


def test_the_guide_shows_accepted_and_refused_examples_of_every_layout():
    assert {b.language for b in ACCEPTED} == {"csv", "tsv", "jsonl", "json"}
    assert any("sentence_id" in b.text for b in ACCEPTED)
    assert set(ANSWERS) == {_name(b) for b in REFUSED}


@pytest.mark.parametrize("block", ACCEPTED, ids=_name)
def test_an_accepted_example_is_stored_whole(breaker, block):
    client, url = breaker
    response = _submit(client, url, block)
    assert response.status_code == 201, json.dumps(response.json(), ensure_ascii=False)
    assert response.json()["pair_count"] == _pair_count(block)
    assert response.json()["warnings"] == []


@pytest.mark.parametrize("block", REFUSED, ids=_name)
def test_a_refused_example_answers_what_the_guide_shows(breaker, block):
    client, url = breaker
    response = _submit(client, url, block)
    assert response.status_code == 400
    assert response.json() == json.loads(ANSWERS[_name(block)].text), json.dumps(
        response.json(), ensure_ascii=False
    )
