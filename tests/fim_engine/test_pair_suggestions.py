"""Suggested edits and draft checks on sentence pairs: the words are the editable segment's,
each candidate edits one segment's text, and every outcome is the whole pair's, the other
segment unchanged, as a separate forward pass gives it."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from edits.words import split_words
from fim_engine import (
    SentencePair,
    check_variant,
    embedding_neighbours,
    load_system,
    suggest,
    suggest_many,
)
from fim_engine.cli import main

from .test_cli import FIXTURES, read_jsonl
from .test_pair_fisher import own_positions

GOOD = SentencePair("the film is good", "it is fun")
PAIRS = [
    GOOD,
    SentencePair("the movie was dull", "the story was boring and flat"),
    SentencePair("a witty , charming story", "the film is very good"),
]


@pytest.fixture(scope="module")
def pair_systems(model_dir):
    return {
        "bert": load_system(model_dir("bert", 3), device="cpu"),
        "bow-pair": load_system(model_dir("bow-pair", 3), device="cpu"),
    }


def assert_outcomes_are_the_whole_pairs(report, systems):
    originals = {name: system.predict([report.text]) for name, system in systems.items()}
    for suggestion in report.suggestions:
        assert isinstance(suggestion.item, SentencePair)
        for name, system in systems.items():
            alone = system.predict([suggestion.item])
            outcome = suggestion.outcomes[name]
            assert outcome.label == alone.labels[0]
            np.testing.assert_allclose(
                list(outcome.probabilities.values()), alone.probabilities[0], atol=1e-6
            )
            assert outcome.changed == (alone.labels[0] != originals[name].labels[0])


@pytest.mark.parametrize("editable", ["premise", "hypothesis"])
def test_edits_go_into_the_editable_segment_and_the_other_stays(pair_systems, editable):
    fixed = "hypothesis" if editable == "premise" else "premise"
    for report in suggest_many(PAIRS, pair_systems, top_k=3, editable=editable):
        assert report.word_segments == [editable] * len(report.leverage)
        assert [w for w, _ in report.leverage] == [
            w for w, _, _ in split_words(getattr(report.text, editable), lowercase=False)
        ]
        assert report.suggestions
        for s in report.suggestions:
            assert s.segment == editable
            assert getattr(s.item, fixed) == getattr(report.text, fixed)
            assert getattr(s.item, editable) == s.text
            assert s.edit.apply(getattr(report.text, editable)) == s.text
            assert s.edit.original == report.leverage[s.word][0]
        assert_outcomes_are_the_whole_pairs(report, pair_systems)


def test_with_both_editable_each_suggestion_edits_one_segment(pair_systems):
    report = suggest(PAIRS[1], pair_systems, guide="bow-pair", editable="both", words=8)
    words = len(split_words(PAIRS[1].premise))
    assert report.word_segments == ["premise"] * words + ["hypothesis"] * (
        len(report.leverage) - words
    )
    assert {s.segment for s in report.suggestions} == {"premise", "hypothesis"}
    for s in report.suggestions:
        other = "hypothesis" if s.segment == "premise" else "premise"
        assert getattr(s.item, other) == getattr(PAIRS[1], other)
        assert s.edit.apply(getattr(PAIRS[1], s.segment)) == s.text
        assert report.word_segments[s.word] == s.segment
    assert_outcomes_are_the_whole_pairs(report, pair_systems)


def test_the_guides_default_editable_applies_to_pairs(model_dir):
    system = load_system(model_dir("bow-pair", 3), device="cpu", editable="premise")
    report = suggest(GOOD, {"bow-pair": system}, sources=["neighbour"])
    assert report.word_segments == ["premise"] * 4
    assert {s.segment for s in report.suggestions} == {"premise"}


def test_on_known_geometry_the_antonym_in_the_hypothesis_flips_to_contradiction(
    agreement_pair_bow,
):
    pair = SentencePair("the film is fun", "it is good")
    report = suggest(pair, {"nli": agreement_pair_bow}, editable="hypothesis", top_k=100, words=1)
    assert report.label == "entailment"
    assert {s.edit.original for s in report.suggestions} == {"good"}
    (bad,) = [s for s in report.suggestions if s.edit.replacement == "bad"]
    assert bad.source == "antonym" and bad.label_unverified and not bad.keeps_label
    assert bad.item == SentencePair("the film is fun", "it is bad") and bad.text == "it is bad"
    assert bad.outcomes["nli"].label == "contradiction" and bad.changed == ["nli"]
    assert bad.projection > 0
    # The nearest words to "good" on the sentiment axis keep the pair an entailment.
    neighbours = [s for s in report.suggestions if s.source == "neighbour"]
    assert {s.edit.replacement for s in neighbours} >= {"great", "funny", "charming"}
    positive = [s for s in neighbours if s.edit.replacement in {"great", "funny", "charming"}]
    assert all(s.probe and s.outcomes["nli"].label == "entailment" for s in positive)


def test_an_antonym_is_made_on_its_segments_own_text(agreement_pair_bow):
    # The premise has two clauses; the hypothesis one: an antonym may go into the hypothesis.
    pair = SentencePair("the film is good , and the story is fun", "the film is good")
    report = suggest(pair, {"nli": agreement_pair_bow}, editable="hypothesis", neighbours=0)
    (bad,) = [s for s in report.suggestions if s.edit.replacement == "bad"]
    assert bad.source == "antonym" and bad.label_unverified and not bad.keeps_label
    assert bad.item == SentencePair(pair.premise, "the film is bad")
    assert bad.outcomes["nli"].label == "contradiction"
    report = suggest(pair, {"nli": agreement_pair_bow}, editable="premise", neighbours=0)
    assert not [s for s in report.suggestions if s.source == "antonym"]


def test_the_projection_is_the_edit_along_the_dense_top_eigenvector_of_the_editable_columns(
    float64_system, metric
):
    system = float64_system("bert", 3)
    for editable in ("hypothesis", "premise"):
        report = suggest(PAIRS[0], {"bert": system}, sources=["neighbour"], editable=editable)
        assert report.suggestions
        positions = own_positions(system, PAIRS[0], editable)
        g, x, words = metric(system, PAIRS[0], editable=editable, positions=positions)
        evals, evecs = torch.linalg.eigh(g)
        top = evecs[:, -1].reshape(x.shape)
        assert report.lambda_max == pytest.approx(float(evals[-1]), rel=1e-6)
        for s in report.suggestions:
            batch = system.encode([s.edit.replacement])
            replacement = system.input_embeddings(batch)[0][batch.editable[0]].mean(dim=0)
            chosen = torch.from_numpy(words == s.word)
            expected = float((top[chosen] * (replacement.double() - x[chosen])).sum())
            assert abs(s.projection) == pytest.approx(abs(expected), rel=1e-6)


def test_a_pair_only_model_has_embedding_neighbours(agreement_pair_bow):
    found = embedding_neighbours(agreement_pair_bow, "Good", k=3)
    assert [r.word for r in found] == ["Charming", "Funny", "Great"]


def test_many_pairs_and_texts_together_give_what_each_alone_gives(pair_systems, model_dir):
    bert = {"bert": pair_systems["bert"]}
    items = [*PAIRS, "a gorgeous , witty and charming movie"]
    together = suggest_many(items, bert, top_k=2, editable="both")
    for item, report in zip(items[:-1], together[:-1], strict=True):
        alone = suggest(item, bert, top_k=2, editable="both")
        assert [s.item for s in report.suggestions] == [s.item for s in alone.suggestions]
    text = together[-1]
    assert text.word_segments is None and all(s.segment is None for s in text.suggestions)
    assert [s.item for s in text.suggestions] == [s.text for s in text.suggestions]


def test_a_pairs_report_names_its_segments_and_a_texts_keeps_its_fields(pair_systems):
    pair = suggest(GOOD, pair_systems, editable="hypothesis", top_k=1).to_dict()
    assert pair["premise"] == GOOD.premise and pair["hypothesis"] == GOOD.hypothesis
    assert "text" not in pair and pair["word_segments"] == ["hypothesis"] * 3
    for s in pair["suggestions"]:
        assert s["segment"] == "hypothesis" and s["premise"] == GOOD.premise
        assert s["hypothesis"] == s["text"]
    json.dumps(pair)
    text = suggest(
        "a gorgeous , witty film", {"bert": load_system(FIXTURES / "models" / "tiny-bert")}
    ).to_dict()
    assert list(text) == [
        "text", "guide", "lambda_max", "label", "truncated", "leverage", "predictions",
        "suggestions",
    ]  # fmt: skip
    for s in text["suggestions"]:
        assert "segment" not in s and "premise" not in s


def test_a_text_cannot_be_edited_in_a_segment_it_does_not_have(pair_systems):
    with pytest.raises(ValueError, match="names a segment of a sentence pair"):
        suggest("a fine film", {"bert": pair_systems["bert"]}, editable="hypothesis")
    with pytest.raises(ValueError, match="editable must be one of"):
        suggest(GOOD, pair_systems, editable="question")


def test_a_draft_pair_is_checked_on_every_system_over_its_editable_segment(pair_systems):
    variant = SentencePair(GOOD.premise, "it is dull")
    check = check_variant(GOOD, variant, pair_systems, editable="hypothesis")
    for name, system in pair_systems.items():
        before, after = system.fisher([GOOD, variant], hints=False, editable="hypothesis")
        outcome = check.outcomes[name]
        assert outcome.original.label == before.label and outcome.variant.label == after.label
        assert outcome.original_lambda_max == pytest.approx(before.lambda_max)
        assert outcome.variant_lambda_max == pytest.approx(after.lambda_max)
        assert outcome.changed == (before.label != after.label)
    both = check_variant(GOOD, variant, pair_systems, editable="both")
    assert both.outcomes["bert"].original_lambda_max != pytest.approx(
        check.outcomes["bert"].original_lambda_max
    )
    assert check.to_dict()["variant"] == {"premise": GOOD.premise, "hypothesis": "it is dull"}
    assert check_variant(tuple(GOOD), tuple(variant), pair_systems).variant == variant
    with pytest.raises(ValueError, match="two texts, or two pairs"):
        check_variant(GOOD, "it is dull", pair_systems)


def test_the_suggest_command_edits_the_pairs_of_a_pair_file(tmp_path):
    source = tmp_path / "pairs.jsonl"
    source.write_text("".join(json.dumps(p._asdict()) + "\n" for p in PAIRS), encoding="utf-8")
    output = tmp_path / "out.jsonl"
    models = [FIXTURES / "models" / "tiny-bert", FIXTURES / "models" / "tiny-bow-pair"]
    arguments = ["suggest", "--input", str(source), "--output", str(output), "--top-k", "2"]
    for model in models:
        arguments += ["--model", str(model)]
    assert main([*arguments, "--editable", "hypothesis"]) == 0
    records = read_jsonl(output)
    assert [(r["premise"], r["hypothesis"]) for r in records] == [tuple(p) for p in PAIRS]
    systems = {path.name: load_system(path, device="cpu") for path in models}
    assert any(record["suggestions"] for record in records)
    for record in records:
        assert set(record["word_segments"]) == {"hypothesis"}
        for s in record["suggestions"]:
            assert s["segment"] == "hypothesis" and s["premise"] == record["premise"]
            variant = SentencePair(s["premise"], s["hypothesis"])
            for name, system in systems.items():
                alone = system.predict([variant])
                assert s["outcomes"][name]["label"] == alone.labels[0]


@pytest.mark.slow
def test_the_real_minilm_suggests_verified_edits_of_a_hypothesis(minilm_head):
    nli = minilm_head(3)
    pair = SentencePair("A man is playing a guitar on stage.", "A man is performing music.")
    report = suggest(pair, {"minilm": nli}, editable="hypothesis", top_k=3)
    assert report.suggestions
    assert report.word_segments == ["hypothesis"] * len(report.leverage)
    for s in report.suggestions:
        assert s.segment == "hypothesis" and s.item.premise == pair.premise
        alone = nli.predict([s.item])
        assert s.outcomes["minilm"].label == alone.labels[0]
