"""Sentence pairs as items: the type, the editable choice, truncation, which models read pairs,
and the static checks of bow-pair directories."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from fim_engine import InputKindError, SentencePair, check_model_dir, load_system
from fim_engine._encoding import TokenizedText
from fim_engine.sentence_pairs import as_item, editable_segments, longest_first

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "fim_engine"
PAIR = SentencePair("a witty , charming story", "the movie was dull")


def test_a_tuple_of_two_strings_is_a_pair_and_anything_else_is_refused():
    assert as_item(("a", "b")) == SentencePair("a", "b")
    assert as_item("a text") == "a text"
    for bad in (("a",), ("a", "b", "c"), ("a", 1), 3, None):
        with pytest.raises(TypeError, match="sentence pair"):
            as_item(bad)


def test_editable_names_a_segment_of_a_pair_only():
    assert editable_segments(PAIR, "premise") == frozenset({0})
    assert editable_segments(PAIR, "hypothesis") == frozenset({1})
    assert editable_segments(PAIR, "both") is None and editable_segments(PAIR, None) is None
    assert editable_segments("a text", "both") is None
    with pytest.raises(ValueError, match="single text"):
        editable_segments("a text", "hypothesis")
    with pytest.raises(ValueError, match="premise, hypothesis, both"):
        editable_segments(PAIR, "second")


@pytest.mark.parametrize(
    ("sizes", "limit", "kept"),
    [
        ((5, 3), 10, (5, 3)),
        ((30, 4), 20, (16, 4)),  # the long premise pays; the short hypothesis stays whole
        ((4, 30), 20, (4, 16)),
        ((12, 11), 20, (10, 10)),
        ((12, 12), 7, (4, 3)),
    ],
)
def test_longest_first_cuts_the_longer_side(sizes, limit, kept):
    assert longest_first(*sizes, limit) == kept
    assert sum(kept) == min(limit, sum(sizes))


def test_keeping_a_segment_renumbers_its_words_and_frees_the_others():
    item = TokenizedText(
        input_ids=[9, 1, 2, 9, 3, 4, 4, 9],
        word_index=[-1, 0, 1, -1, 2, 3, 3, -1],
        words=["good", "film", "un", "witty"],
        truncated=False,
        spans=[(0, 4), (5, 9), (0, 2), (3, 8)],
        token_type_ids=[0, 0, 0, 0, 1, 1, 1, 1],
        word_segments=[0, 0, 1, 1],
    )
    hypothesis = item.keep_segments(frozenset({1}))
    assert hypothesis.word_index == [-1, -1, -1, -1, 0, 1, 1, -1]
    assert hypothesis.words == ["un", "witty"] and hypothesis.spans == [(0, 2), (3, 8)]
    assert hypothesis.word_segments == [1, 1]
    assert item.keep_segments(None) is item and item.keep_segments(frozenset({0, 1})) is item


@pytest.mark.parametrize("model", ["tiny-bert", "tiny-bow-pair"])
def test_a_long_pair_is_cut_longest_first_and_says_so(model):
    system = load_system(FIXTURES / "models" / model, device="cpu", max_length=12)
    premise = " ".join(["the film is good"] * 6)
    pair = SentencePair(premise, "it was dull")
    (tokens,) = system.tokenize([pair])
    assert len(tokens.input_ids) <= 12
    assert tokens.truncated
    hypothesis = [w for w, s in zip(tokens.words, tokens.word_segments or [], strict=True) if s]
    assert hypothesis == ["it", "was", "dull"]
    (result,) = system.fisher([pair], editable="hypothesis")
    assert result.truncated and [w for w, _ in result.hints] == ["it", "was", "dull"]
    assert not system.fisher([SentencePair("good", "dull")])[0].truncated


def test_single_text_models_refuse_pairs_and_the_pair_model_refuses_texts():
    cnn = load_system(FIXTURES / "models" / "tiny-cnn", device="cpu")
    with pytest.raises(ValueError, match="cnn reads single texts; it was given a sentence pair"):
        cnn.predict([PAIR])
    pairs = load_system(FIXTURES / "models" / "tiny-bow-pair", device="cpu")
    with pytest.raises(ValueError, match="bow-pair reads sentence pairs"):
        pairs.fisher(["a single text"])
    bert = load_system(FIXTURES / "models" / "tiny-bert", device="cpu")
    assert len(bert.predict(["a text", PAIR])) == 2  # a transformers model reads both


def test_bigrams_of_a_pair_never_cross_from_premise_to_hypothesis():
    system = load_system(FIXTURES / "models" / "tiny-bow-pair", device="cpu", dtype=torch.float64)
    model = system.backend.module
    batch = system.encode([PAIR])
    embeds = system.input_embeddings(batch)
    segments = batch.token_type_ids
    assert segments is not None
    bucket_rows = model.bigrams.weight.shape[0]
    with torch.no_grad():
        before = system.logits_from_embeddings(embeds, batch)
        # The one bigram that would span the boundary: (last premise word, first hypothesis
        # word). Changing its row changes nothing.
        ids = batch.input_ids[0]
        boundary = int(segments[0].tolist().index(1))
        crossing = int((ids[boundary - 1] * 1_000_003 + ids[boundary]) % bucket_rows)
        inside = int((ids[0] * 1_000_003 + ids[1]) % bucket_rows)
        assert crossing != inside
        model.bigrams.weight[crossing] += 10.0
        after = system.logits_from_embeddings(embeds, batch)
        model.bigrams.weight[crossing] -= 10.0
        model.bigrams.weight[inside] += 10.0
        moved = system.logits_from_embeddings(embeds, batch)
        model.bigrams.weight[inside] -= 10.0
    torch.testing.assert_close(after, before, rtol=0, atol=1e-12)
    assert (moved - before).abs().max() > 1e-3


def test_a_single_token_type_model_reads_pairs_without_token_types(tmp_path):
    target = shutil.copytree(FIXTURES / "models" / "tiny-bert", tmp_path / "one-type")
    from safetensors.torch import load_file, save_file

    config = json.loads((target / "config.json").read_text())
    config["type_vocab_size"] = 1
    (target / "config.json").write_text(json.dumps(config))
    weights = load_file(str(target / "model.safetensors"))
    name = next(key for key in weights if key.endswith("token_type_embeddings.weight"))
    weights[name] = weights[name][:1].clone()
    save_file(weights, str(target / "model.safetensors"), metadata={"format": "pt"})
    system = load_system(target, device="cpu")
    assert system.encode([PAIR]).token_type_ids is None
    assert system.fisher([PAIR], editable="hypothesis")[0].lambda_max > 0


def test_model_formats_say_what_they_read():
    models = FIXTURES / "models"
    assert check_model_dir(models / "tiny-bow-pair").inputs == ("pair",)
    assert check_model_dir(models / "tiny-bow").inputs == ("text",)
    assert check_model_dir(models / "tiny-bert").inputs == ("text", "pair")
    assert check_model_dir(models / "tiny-bow-pair", inputs="pair").architecture == "bow-pair"
    assert check_model_dir(models / "tiny-bert", inputs="pair").kind == "transformers"


@pytest.mark.parametrize(
    ("model", "inputs", "message"),
    [
        ("tiny-cnn", "pair", "cnn architecture reads single texts, but this shared task gives "),
        ("tiny-bow-pair", "text", "bow-pair architecture reads sentence pairs, but this shared"),
    ],
)
def test_a_model_that_cannot_read_the_tasks_items_is_refused(model, inputs, message):
    with pytest.raises(InputKindError, match=message):
        check_model_dir(FIXTURES / "models" / model, inputs=inputs)


def test_an_unknown_inputs_value_is_a_programming_error():
    with pytest.raises(ValueError, match='inputs must be "text", "pair" or None'):
        check_model_dir(FIXTURES / "models" / "tiny-bow", inputs="pairs")
