"""Edit leverage per word: the first-order KL of deleting it, against the dense metric."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fim_engine import fisher_top_eigenvector

TEXTS = [
    "good",
    "It isn't a bad film at all, but the story was unbelievably dull!",
    "Unbelievably witty and charming",
]
FAMILIES = ("bow", "cnn", "bilstm", "bert")


def deletion(x: torch.Tensor, words: np.ndarray, word: int, pad: torch.Tensor) -> torch.Tensor:
    """η (n·d) that replaces every token of ``word`` by the pad embedding."""
    eta = torch.zeros_like(x)
    chosen = torch.from_numpy(words == word)
    eta[chosen] = pad.double() - x[chosen]
    return eta.flatten()


def close(actual: float, expected: float) -> bool:
    return abs(actual - expected) <= 1e-6 * max(abs(expected), 1e-12)


@pytest.mark.parametrize("family", FAMILIES)
def test_leverage_is_the_whole_quadratic_form_of_a_deletion_for_two_classes(
    float64_system, metric, family
):
    system = float64_system(family, 2)
    pad = system.pad_embedding()
    for text, result in zip(TEXTS, system.fisher(TEXTS), strict=True):
        g, x, words = metric(system, text)
        assert [w for w, _ in result.leverage] == [w for w, _ in result.hints]
        expected = [
            0.5 * float(eta @ g @ eta)
            for eta in (deletion(x, words, w, pad) for w in range(len(result.leverage)))
        ]
        assert max(expected) > 1e-10, "a degenerate model would prove nothing"
        for (_, actual), wanted in zip(result.leverage, expected, strict=True):
            assert close(actual, wanted)


@pytest.mark.parametrize("family", FAMILIES)
def test_leverage_is_the_top_eigen_component_of_a_deletion_for_three_classes(
    float64_system, metric, family
):
    system = float64_system(family, 3)
    pad = system.pad_embedding()
    for text, result in zip(TEXTS, system.fisher(TEXTS), strict=True):
        g, x, words = metric(system, text)
        evals, evecs = torch.linalg.eigh(g)
        top = evecs[:, -1]
        for w, (_, actual) in enumerate(result.leverage):
            eta = deletion(x, words, w, pad)
            assert close(actual, 0.5 * float(evals[-1]) * float(top @ eta) ** 2)
            # G has rank 2 here: the other eigen-direction only adds to the KL.
            assert actual <= 0.5 * float(eta @ g @ eta) * (1 + 1e-9)


def test_on_a_bag_of_words_the_decisive_word_has_the_top_leverage_and_not_the_top_hint(
    sentiment_bow,
):
    (result,) = sentiment_bow.fisher(["the film is good"])
    leverage = dict(result.leverage)
    assert max(leverage, key=leverage.get) == "good"
    assert leverage["good"] > 100 * max(v for w, v in leverage.items() if w != "good")
    # The mean pools every word alike: the eigenvector's norms cannot tell them apart.
    np.testing.assert_allclose([score for _, score in result.hints], 0.5)


def test_leverage_follows_the_sentiment_word_wherever_it_stands(sentiment_bow):
    for text, decisive in [
        ("bad , but it is a film", "bad"),
        ("a very charming movie", "charming"),
        ("it was the story and the mess", "mess"),
    ]:
        (result,) = sentiment_bow.fisher([text])
        assert max(result.leverage, key=lambda pair: pair[1])[0] == decisive


@pytest.mark.parametrize("num_labels", [2, 3])
@pytest.mark.parametrize("family", ["cnn", "bert"])
def test_the_top_eigenvector_points_towards_the_decision_boundary(
    float64_system, family, num_labels
):
    system = float64_system(family, num_labels)
    batch = system.encode(TEXTS)
    embeds = system.input_embeddings(batch).detach().requires_grad_(True)
    logits = system.logits_from_embeddings(embeds, batch)
    _, v = fisher_top_eigenvector(logits, embeds, batch.editable)
    predicted = logits.detach().argmax(dim=-1)
    step = 1e-4 * v.to(embeds.dtype)
    with torch.no_grad():

        def chosen(x: torch.Tensor) -> torch.Tensor:
            log_p = torch.log_softmax(system.logits_from_embeddings(x, batch), dim=-1)
            return log_p.gather(1, predicted[:, None])[:, 0]

        before, towards, away = chosen(embeds), chosen(embeds + step), chosen(embeds - step)
    assert torch.all(towards < before) and torch.all(away > before)
    norms = v.flatten(1).norm(dim=-1)
    torch.testing.assert_close(norms, torch.ones_like(norms))
    assert v[~batch.editable].abs().sum() == 0


def test_without_hints_there_is_no_leverage(model_dir):
    from fim_engine import load_system

    system = load_system(model_dir("cnn", 2))
    (result,) = system.fisher(["a gorgeous film"], hints=False)
    assert result.hints == [] and result.leverage == []
