"""``manage.py guidance_suggest``: verified suggestions in bulk for the top originals."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from .guidance_conftest import assert_claims_nothing, build_geometry_task

pytestmark = pytest.mark.embedded


def test_the_top_originals_get_verified_suggestions_in_rank_order(db, tmp_path):
    import fim_engine

    task = build_geometry_task(tmp_path)
    out = tmp_path / "suggestions.jsonl"

    call_command("guidance_suggest", "sst", top=3, out=out, top_k=2, verbosity=0)

    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(line["original_id"], line["rank"]) for line in lines] == [
        ("on", 1), ("near", 2), ("mild-neg", 3)
    ]  # fmt: skip
    systems = {str(task.strawman_bow.id), str(task.melbourne_bow.id)}
    texts = [s["text"] for line in lines for s in line["report"]["suggestions"]]
    assert texts
    # Every reported outcome is what a separate forward pass of the model says.
    fresh = fim_engine.load_system(task.model_dir).predict(texts)
    said = dict(zip(texts, fresh.labels, strict=True))
    for line in lines:
        assert set(line["report"]["predictions"]) == systems
        for suggestion in line["report"]["suggestions"]:
            assert set(suggestion["outcomes"]) == systems
            for outcome in suggestion["outcomes"].values():
                assert outcome["label"] == said[suggestion["text"]]
                # A probe (an embedding neighbour) claims no label, so no break (edits.claims).
                if suggestion["probe"]:
                    assert suggestion["variant_label"] is None and outcome["breaks"] is None
                    assert_claims_nothing(suggestion)
                else:
                    assert outcome["breaks"] in (True, False)
    assert {s["probe"] for line in lines for s in line["report"]["suggestions"]} == {True, False}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope", "--top", "3"], "No shared task has the slug 'nope'"),
        (["sst", "--top", "0"], "--top must be at least 1"),
        (["sst", "--top-k", "99"], "--top-k 1 to 20"),
    ],
)
def test_bad_arguments_are_named(db, tmp_path, args, message):
    build_geometry_task(tmp_path)
    with pytest.raises(CommandError, match=message):
        call_command("guidance_suggest", *args, verbosity=0)


def test_a_task_without_ready_hosted_systems_says_so(db):
    from ..conftest import build_cast

    build_cast()
    with pytest.raises(CommandError, match="No ready hosted system has λmax"):
        call_command("guidance_suggest", "sst", verbosity=0)


def test_a_span_task_gets_the_span_suggestions_of_its_top_item(db, qa_dir, tmp_path):
    import fim_engine

    from .test_span_suggest import span_task

    cast = span_task(qa_dir)
    out = tmp_path / "span.jsonl"

    call_command("guidance_suggest", cast.shared_task.slug, top=1, out=out, top_k=2, verbosity=0)

    [line] = [json.loads(text) for text in out.read_text(encoding="utf-8").splitlines()]
    assert line["rank"] == 1
    report = line["report"]
    assert report["task_type"] == "span_extraction"
    assert report["original"]["id"] == line["original_id"]
    suggestions = report["suggestions"]
    assert suggestions
    # Each system's answer on each variant is what a separate forward pass says; a break is
    # claimed only where the variant's answer is known.
    question = report["original"]["question"]
    fresh = fim_engine.load_span_system(qa_dir).predict(
        [question] * len(suggestions), [s["text"] for s in suggestions]
    )
    for suggestion, answer in zip(suggestions, fresh, strict=True):
        [outcome] = suggestion["outcomes"]
        assert outcome["system"] == str(line["guide"])
        assert outcome["variant"]["text"] == answer.text
        assert (suggestion["breaks"] is None) is suggestion["label_unverified"]
