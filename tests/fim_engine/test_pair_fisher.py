"""λmax, hints and attributions of sentence pairs over the editable segment only: equal to the
dense G built from the columns of the editable segment's word pieces, in float64, for a BERT
classifier (pair encoding, token types) and the native bow-pair model, at 2 and 3 labels."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from edits.words import split_words
from fim_engine import SentencePair, dense_fisher

PAIRS = [
    SentencePair("the film is good", "it is unbelievably dull !"),
    SentencePair("a witty , charming story at all", "the movie was fun"),
    SentencePair("a mess", "it is n't a gorgeous film , but it was very moving"),
]
CASES = [(family, c) for family in ("bert", "bow-pair") for c in (2, 3)]
SEGMENT = {"premise": 0, "hypothesis": 1}


def relative_error(a: float, b: float) -> float:
    return abs(a - b) / max(abs(b), 1e-300)


def own_positions(system, pair: SentencePair, editable: str) -> torch.Tensor:
    """The editable token positions of ``pair``, found without the library's encoding: from
    the tokenizer's own pair encoding (token types, special tokens) for BERT, from the word
    counts of each side for bow-pair (its input is the premise's words then the hypothesis's)."""
    if system.format == "transformers":
        tokenizer = system.backend.tokenizer
        encoding = tokenizer(pair.premise, pair.hypothesis)
        special = torch.tensor(
            tokenizer.get_special_tokens_mask(
                encoding["input_ids"], already_has_special_tokens=True
            )
        ).bool()
        types = torch.tensor(encoding["token_type_ids"])
    else:
        sizes = [len(split_words(side)) for side in pair]
        types = torch.tensor([0] * sizes[0] + [1] * sizes[1])
        special = torch.zeros_like(types).bool()
    wanted = ~special
    if editable != "both":
        wanted &= types == SEGMENT[editable]
    return wanted


@pytest.mark.parametrize(("family", "num_labels"), CASES)
@pytest.mark.parametrize("editable", ["premise", "hypothesis", "both"])
def test_pair_lambda_max_and_hints_equal_the_dense_g_of_the_editable_columns(
    float64_system, dense, family, num_labels, editable
):
    system = float64_system(family, num_labels)
    results = system.fisher(PAIRS, editable=editable)
    for pair, result in zip(PAIRS, results, strict=True):
        positions = own_positions(system, pair, editable)
        batch = system.encode([pair], editable=editable)
        assert torch.equal(batch.editable[0], positions)
        expected, word_norms = dense(system, pair, editable=editable, positions=positions)
        assert expected > 1e-12, "the tiny model is degenerate; the comparison would prove nothing"
        assert relative_error(result.lambda_max, expected) <= 1e-6
        np.testing.assert_allclose([s for _, s in result.hints], word_norms, atol=1e-7)


@pytest.mark.parametrize(("family", "num_labels"), CASES)
def test_hints_list_the_editable_segments_words_premise_first(float64_system, family, num_labels):
    system = float64_system(family, num_labels)
    pair = PAIRS[0]
    by_editable = {e: system.fisher([pair], editable=e)[0] for e in ("premise", "hypothesis")}
    both = system.fisher([pair], editable="both")[0]
    default = system.fisher([pair])[0]
    premise = [w for w, _ in by_editable["premise"].hints]
    hypothesis = [w for w, _ in by_editable["hypothesis"].hints]
    assert premise == ["the", "film", "is", "good"]
    assert hypothesis == ["it", "is", "unbelievably", "dull", "!"]
    assert [w for w, _ in both.hints] == premise + hypothesis
    assert both.word_segments == ["premise"] * 4 + ["hypothesis"] * 5
    assert by_editable["hypothesis"].word_segments == ["hypothesis"] * 5
    assert [w for w, _ in both.leverage] == premise + hypothesis
    assert default.lambda_max == both.lambda_max
    # The prediction does not depend on which side counts.
    for result in (*by_editable.values(), both):
        np.testing.assert_allclose(result.probabilities, default.probabilities, atol=1e-12)
    if num_labels == 2:  # rank one: the segments' squared gradient norms add up
        total = sum(r.lambda_max for r in by_editable.values())
        assert relative_error(both.lambda_max, total) <= 1e-9


@pytest.mark.parametrize("family", ["bert", "bow-pair"])
def test_word_spans_are_offsets_into_their_own_segment(float64_system, family):
    system = float64_system(family, 2)
    pair = PAIRS[2]
    (directions,) = system.word_directions([pair], editable="both")
    assert directions.text == pair
    assert directions.spans is not None
    for word, (start, end), segment in zip(
        directions.words, directions.spans, directions.word_segments or [], strict=True
    ):
        assert getattr(pair, segment)[start:end] == word


@pytest.mark.parametrize(("family", "num_labels"), CASES)
def test_a_padded_batch_of_pairs_gives_each_pairs_values_alone(float64_system, family, num_labels):
    system = float64_system(family, num_labels)
    together = system.fisher(PAIRS, editable="hypothesis")
    for pair, batched in zip(PAIRS, together, strict=True):
        (alone,) = system.fisher([pair], editable="hypothesis")
        assert relative_error(batched.lambda_max, alone.lambda_max) <= 1e-10
        np.testing.assert_allclose(
            [s for _, s in batched.hints], [s for _, s in alone.hints], atol=1e-10
        )
    np.testing.assert_allclose(
        system.predict(PAIRS).probabilities,
        np.vstack([system.predict([pair]).probabilities for pair in PAIRS]),
        atol=1e-12,
    )


def test_a_bert_pair_is_scored_as_the_tokenizers_pair_encoding(float64_system):
    system = float64_system("bert", 3)
    tokenizer, model = system.backend.tokenizer, system.backend.module
    for pair in PAIRS:
        inputs = tokenizer(pair.premise, pair.hypothesis, return_tensors="pt")
        assert inputs["token_type_ids"].max() == 1
        with torch.no_grad():
            expected = torch.softmax(model(**inputs).logits.double(), dim=-1)[0]
        np.testing.assert_allclose(system.predict([pair]).probabilities[0], expected, atol=1e-12)
    # The pair is not the text of its two sides run together.
    joined = system.predict([f"{PAIRS[0].premise} {PAIRS[0].hypothesis}"]).probabilities
    assert not np.allclose(joined, system.predict(PAIRS[:1]).probabilities)


def test_tuples_are_pairs_and_a_system_default_applies(model_dir):
    from fim_engine import load_system

    path = model_dir("bert", 2)
    system = load_system(path, device="cpu", dtype=torch.float64, editable="hypothesis")
    as_tuple = system.fisher([tuple(PAIRS[0])])[0]
    assert as_tuple.lambda_max == system.fisher(PAIRS[:1], editable="hypothesis")[0].lambda_max
    assert as_tuple.word_segments == ["hypothesis"] * 5
    assert system.fisher(PAIRS[:1], editable="both")[0].lambda_max > as_tuple.lambda_max


@pytest.mark.parametrize("family", ["bert", "bow-pair"])
def test_algorithm_1_on_pairs_agrees(float64_system, family):
    system = float64_system(family, 3)
    reference = dense_fisher(system, PAIRS[1], editable="premise")
    (result,) = system.fisher([PAIRS[1]], editable="premise")
    assert relative_error(result.lambda_max, reference.lambda_max) <= 1e-6


@pytest.mark.parametrize("family", ["bert", "bow-pair"])
def test_integrated_gradients_of_a_pair_move_the_editable_side_only(float64_system, family):
    system = float64_system(family, 3)
    (hypothesis,) = system.attributions(PAIRS[:1], steps=64, editable="hypothesis")
    (both,) = system.attributions(PAIRS[:1], steps=64, editable="both")
    assert [w for w, _ in hypothesis.attributions] == ["it", "is", "unbelievably", "dull", "!"]
    assert len(both.attributions) == 9
    # Completeness holds for each path: the sum is F(x) − F(baseline) of that baseline, up to
    # the quadrature's error (bow-pair's |u − v| has kinks along the path where a coordinate of
    # u − v changes sign: Gauss–Legendre converges slowly over them).
    tolerance = 1e-6 if family == "bert" else 2e-4
    assert abs(hypothesis.convergence_delta) < tolerance
    assert abs(both.convergence_delta) < tolerance
    assert sum(s for _, s in hypothesis.attributions) != pytest.approx(
        sum(s for _, s in both.attributions), abs=1e-9
    )


@pytest.mark.slow
@pytest.mark.parametrize("editable", ["hypothesis", "both"])
def test_on_minilm_pair_lambda_max_and_hints_equal_the_dense_reference(
    minilm_head, dense, editable
):
    system = minilm_head(3, dtype=torch.float64, max_length=32)
    pair = SentencePair("A man plays a guitar.", "Nobody plays music.")
    assert system.contrast_pass() is not None  # the BERT pass, token types 0 and 1
    (result,) = system.fisher([pair], editable=editable)
    positions = own_positions(system, pair, editable)
    expected, word_norms = dense(system, pair, editable=editable, positions=positions)
    assert expected > 1e-12
    assert relative_error(result.lambda_max, expected) <= 1e-6
    np.testing.assert_allclose([s for _, s in result.hints], word_norms, atol=1e-7)
