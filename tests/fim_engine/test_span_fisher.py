"""Span λmax (Lanczos on Jacobian-vector products) against Algorithm 1's dense G, built from
the full Jacobian of the start and end log-probabilities, on a tiny QA BERT and on MiniLM."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
import torch
from torch.autograd.functional import jacobian

from fim_engine.span_model import SpanSystem, load_span_system
from fim_engine.spans import lanczos_top, span_fisher, span_lambda_max, span_lambda_max_by_mass

PAIRS = [
    ("what is fun ?", "the film is fun and witty ."),
    ("what was dull ?", "this movie was dull , not charming at all"),
    ("what is good ?", "it is good"),
]


@pytest.fixture(scope="module")
def tiny_qa(tmp_path_factory: pytest.TempPathFactory, builders: ModuleType) -> SpanSystem:
    from transformers import BertForQuestionAnswering

    torch.manual_seed(3)
    out = tmp_path_factory.mktemp("tiny-qa")
    BertForQuestionAnswering(builders.tiny_bert_config(2)).save_pretrained(out)
    builders.tiny_tokenizer().save_pretrained(out)
    return load_span_system(out, device="cpu", dtype=torch.float64)


def dense_span_metric(system: SpanSystem, question: str, sentence: str) -> tuple[np.ndarray, list]:
    """G = Σ_y p_y ∇log p_y ∇log p_yᵀ + Σ_y q_y ∇log q_y ∇log q_yᵀ over the sentence's token
    embeddings, from the full Jacobian (Algorithm 1), and the sentence's word of each token."""
    batch = system.encode([question], [sentence])
    context = batch.context[0]
    index = context.nonzero().squeeze(-1)
    with torch.enable_grad():
        embeds = system.input_embeddings(batch).detach()[0]

        def log_probs(x: torch.Tensor) -> torch.Tensor:
            full = embeds.index_put((index,), x).unsqueeze(0)
            start, end = system.logits_from_embeddings(full, batch)
            start, end = start[0, index], end[0, index]
            return torch.cat([torch.log_softmax(start, -1), torch.log_softmax(end, -1)])

        x = embeds[index]
        jac = jacobian(log_probs, x).reshape(2 * len(index), -1).double()
        weights = log_probs(x).detach().exp().double()
    g = jac.T @ (weights[:, None] * jac)
    return g.numpy(), batch.word_index[0, index].tolist()


def dense_top(g: np.ndarray) -> tuple[float, np.ndarray]:
    evals, evecs = np.linalg.eigh(g)
    return float(evals[-1]), evecs[:, -1]


def word_norms(vector: np.ndarray, token_words: list[int], dim: int) -> np.ndarray:
    blocks = vector.reshape(len(token_words), dim)
    squared = np.zeros(max(token_words) + 1)
    np.add.at(squared, token_words, (blocks**2).sum(axis=1))
    return np.sqrt(squared)


def test_lanczos_finds_the_top_eigenpair_of_a_dense_matrix() -> None:
    generator = torch.Generator().manual_seed(0)
    a = torch.randn(3, 20, 6, generator=generator, dtype=torch.float64)
    m = a @ a.mT  # three PSD 20×20 matrices of rank 6
    lam, u, steps = lanczos_top(
        lambda w: (m @ w[..., None])[..., 0],
        torch.randn(3, 20, generator=generator, dtype=torch.float64),
        max_steps=20,
    )
    expected = torch.linalg.eigvalsh(m)[:, -1]
    assert torch.allclose(lam, expected, rtol=1e-10)
    assert torch.allclose((m @ u[..., None])[..., 0], lam[:, None] * u, atol=1e-8)
    assert steps <= 7  # rank 6: the Krylov space is exhausted after at most 7 steps


@pytest.mark.parametrize(("question", "sentence"), PAIRS)
def test_span_lambda_max_matches_the_dense_metric(
    tiny_qa: SpanSystem, question: str, sentence: str
) -> None:
    g, token_words = dense_span_metric(tiny_qa, question, sentence)
    expected, top = dense_top(g)
    assert expected > 1e-6
    # At the default tolerance λmax is exact to 1e-6 (its error is quadratic in the residual).
    result = span_fisher(tiny_qa, [question], [sentence], tol=1e-6)[0]
    assert result.lambda_max == pytest.approx(expected, rel=1e-6)
    # The mass path with nothing left out is the dense eigenproblem of G's Jacobian rows.
    exact = span_fisher(tiny_qa, [question], [sentence], mass_tol=0.0, max_rows=None)[0]
    assert exact.lambda_max == pytest.approx(expected, rel=1e-9)
    dim = tiny_qa.module.config.hidden_size
    exact_hints = np.array([score for _, score in exact.hints])
    assert exact_hints == pytest.approx(word_norms(top, token_words, dim), abs=1e-6)
    # The eigenvector's error is linear in the residual: compare it at a tight tolerance.
    precise = span_fisher(tiny_qa, [question], [sentence], tol=1e-11)[0]
    dim = tiny_qa.module.config.hidden_size
    hints = np.array([score for _, score in precise.hints])
    assert hints == pytest.approx(word_norms(top, token_words, dim), abs=1e-6)
    # Rank ≤ 2(n − 1) on n candidate tokens.
    n = len(token_words)
    assert np.sum(np.linalg.eigvalsh(g) > 1e-10 * expected) <= 2 * (n - 1)


def test_a_batch_gives_what_each_pair_gives_alone(tiny_qa: SpanSystem) -> None:
    questions, sentences = zip(*PAIRS, strict=True)
    together = span_fisher(tiny_qa, list(questions), list(sentences))
    assert [r.lambda_max for r in tiny_qa.fisher(list(questions), list(sentences))] == [
        r.lambda_max for r in together
    ]
    for (question, sentence), batched in zip(PAIRS, together, strict=True):
        alone = span_fisher(tiny_qa, [question], [sentence])[0]
        assert batched.lambda_max == pytest.approx(alone.lambda_max, rel=1e-8)
        assert [w for w, _ in batched.hints] == sentence.split()


class OnlyTheProtocol:
    """A span system seen through ``spans.SpanModel`` alone: nothing else to reach into."""

    def __init__(self, system: SpanSystem) -> None:
        self.batch_size = system.batch_size
        self.encode = system.encode
        self.input_embeddings = system.input_embeddings
        self.logits_from_embeddings = system.logits_from_embeddings
        self.pad_embedding = system.pad_embedding


def test_span_lambda_max_needs_only_what_its_protocol_names(tiny_qa: SpanSystem) -> None:
    questions, sentences = (list(side) for side in zip(*PAIRS, strict=True))
    through = span_fisher(OnlyTheProtocol(tiny_qa), questions, sentences)
    direct = tiny_qa.fisher(questions, sentences)
    assert [r.lambda_max for r in through] == [r.lambda_max for r in direct]
    assert [r.leverage for r in through] == [r.leverage for r in direct]


def test_leverage_is_the_kl_of_deleting_a_word_along_the_top_eigenvector(
    tiny_qa: SpanSystem,
) -> None:
    question, sentence = PAIRS[0]
    g, token_words = dense_span_metric(tiny_qa, question, sentence)
    lam, top = dense_top(g)
    batch = tiny_qa.encode([question], [sentence])
    index = batch.context[0].nonzero().squeeze(-1)
    embeds = tiny_qa.input_embeddings(batch)[0, index].double().numpy()
    pad = tiny_qa.module.get_input_embeddings().weight[0].double().numpy()
    dim = embeds.shape[1]
    result = span_fisher(tiny_qa, [question], [sentence], tol=1e-11)[0]
    for word, (_, leverage) in enumerate(result.leverage):
        eta = np.zeros_like(embeds)
        eta[np.array(token_words) == word] = pad - embeds[np.array(token_words) == word]
        along = float(top @ eta.reshape(-1))
        assert leverage == pytest.approx(0.5 * lam * along**2, rel=1e-6, abs=1e-12)
    assert dim == tiny_qa.module.config.hidden_size


@pytest.mark.slow
def test_span_lambda_max_is_exact_on_minilm_with_a_fresh_qa_head(tmp_path: Path) -> None:
    from transformers import AutoTokenizer, BertForQuestionAnswering

    from fim_engine._transformers_backend import SAFE_LOADING
    from fim_engine.training import minilm_checkpoint

    torch.manual_seed(0)
    model = BertForQuestionAnswering.from_pretrained(
        minilm_checkpoint(), use_safetensors=True, **SAFE_LOADING
    )
    model.save_pretrained(tmp_path)
    AutoTokenizer.from_pretrained(minilm_checkpoint(), **SAFE_LOADING).save_pretrained(tmp_path)
    system = load_span_system(tmp_path, device="cpu", dtype=torch.float64)
    question, sentence = "who beat someone ?", "UCD beat St Vincents in the final ."
    g, _ = dense_span_metric(system, question, sentence)
    expected, _ = dense_top(g)
    result = span_fisher(system, [question], [sentence], tol=1e-6)[0]
    fast = span_fisher(system, [question], [sentence], max_rows=None)[0]
    assert expected > 0
    assert result.lambda_max == pytest.approx(expected, rel=1e-6)
    assert fast.lambda_max == pytest.approx(expected, rel=1e-3)
    assert ranking(fast.hints) == ranking(
        span_fisher(system, [question], [sentence], tol=1e-11)[0].hints
    )


def test_the_benchmark_times_lambda_max_against_forward_passes(tiny_qa: SpanSystem) -> None:
    from fim_engine.bench.span import bench_span_lambda

    questions, sentences = zip(*PAIRS, strict=True)
    bench = bench_span_lambda(tiny_qa, list(questions), list(sentences))
    assert bench.pairs == 3
    assert bench.forward_s > 0 and bench.lambda_s > 0
    assert bench.ratio == pytest.approx(bench.lambda_s / bench.forward_s)
    assert bench.mean_steps >= 1 and bench.mean_rows >= 4
    assert bench.rel_error_max <= 1e-3 and bench.same_ranking == 1.0


def fast_against_tight(system: SpanSystem, pairs: list[tuple[str, str]], mass_tol: float):
    """The mass path's λmax and hints next to Lanczos at 1e-11, per pair."""
    questions, sentences = zip(*pairs, strict=True)
    tight = span_fisher(system, list(questions), list(sentences), tol=1e-11)
    fast = span_fisher(system, list(questions), list(sentences), mass_tol=mass_tol, max_rows=None)
    return list(zip(fast, tight, strict=True))


def ranking(hints: list[tuple[str, float]]) -> list[int]:
    return sorted(range(len(hints)), key=lambda i: -hints[i][1])


@pytest.mark.parametrize("mass_tol", [0.0, 1e-4])
def test_the_mass_path_agrees_with_tight_lanczos(tiny_qa: SpanSystem, mass_tol: float) -> None:
    # The stated error of the fast path: λmax within 1e-3 (relative), hints ranking words the
    # same; with nothing left out (mass_tol=0) it is exact.
    for fast, tight in fast_against_tight(tiny_qa, PAIRS, mass_tol):
        bound = 1e-9 if mass_tol == 0 else 1e-3
        assert fast.lambda_max == pytest.approx(tight.lambda_max, rel=bound)
        assert ranking(fast.hints) == ranking(tight.hints)
        assert fast.lambda_max <= tight.lambda_max * (1 + 1e-9)  # a lower bound


def test_leaving_mass_out_gives_a_lower_bound_that_names_what_it_dropped(
    tiny_qa: SpanSystem,
) -> None:
    question, sentence = PAIRS[0]
    batch = tiny_qa.encode([question], [sentence])
    with torch.enable_grad():
        embeds = tiny_qa.input_embeddings(batch).detach().requires_grad_(True)
        start, end = tiny_qa.logits_from_embeddings(embeds, batch)
        exact, _, _ = span_lambda_max(
            start, end, embeds, editable=batch.context, candidates=batch.context, tol=1e-12
        )
        found = span_lambda_max_by_mass(
            start, end, embeds, editable=batch.context, candidates=batch.context, mass_tol=0.5
        )
        assert found is not None
        lam, v, dropped, rows = found
        none = span_lambda_max_by_mass(
            start, end, embeds, editable=batch.context, candidates=batch.context, max_bytes=1
        )
    assert none is None
    too_many = span_lambda_max_by_mass(
        start, end, embeds, editable=batch.context, candidates=batch.context, max_rows=3
    )
    assert too_many is None
    assert 0 < float(dropped[0]) <= 0.5
    assert rows < 2 * int(batch.context.sum()) + 2
    assert 0 < float(lam[0]) <= float(exact[0])
    assert float(v.norm()) == pytest.approx(1.0)


def test_a_row_without_candidates_has_lambda_zero_and_leaves_the_others_exact() -> None:
    from fim_engine.spans import span_lambda_max

    generator = torch.Generator().manual_seed(0)
    weights = torch.randn(3, 2, generator=generator, dtype=torch.float64)
    x = torch.randn(2, 5, 3, generator=generator, dtype=torch.float64, requires_grad=True)
    candidates = torch.tensor([[False, True, True, True, False], [False] * 5])

    def logits(embeds: torch.Tensor) -> torch.Tensor:  # position t mixes t and its right neighbour
        mixed = torch.tanh(embeds + 0.5 * embeds.roll(-1, dims=1))
        return mixed @ weights

    out = logits(x)
    lam, v, _ = span_lambda_max(
        out[..., 0], out[..., 1], x, editable=candidates, candidates=candidates, tol=1e-12
    )
    assert float(lam[1]) == 0.0 and float(v[1].abs().sum()) == 0.0
    index = candidates[0].nonzero().squeeze(-1)
    base = x.detach()[0]

    def log_probs(part: torch.Tensor) -> torch.Tensor:
        full = logits(base.index_put((index,), part).unsqueeze(0))[0, index]
        return torch.cat([torch.log_softmax(full[:, 0], -1), torch.log_softmax(full[:, 1], -1)])

    jac = jacobian(log_probs, base[index]).reshape(2 * len(index), -1)
    g = jac.T @ (log_probs(base[index]).exp()[:, None] * jac)
    assert float(lam[0]) == pytest.approx(float(torch.linalg.eigvalsh(g)[-1]), rel=1e-9)
