"""Each text is tokenized once per tokenizer: across passes and across systems that share one."""

from __future__ import annotations

import numpy as np

from fim_engine import load_system
from fim_engine._encoding import TOKEN_CACHE, TokenCache

TEXTS = ["a gorgeous , witty film", "flat and tedious", "a gorgeous , witty film"]


def test_predict_then_fisher_tokenizes_each_text_once(model_dir):
    system = load_system(model_dir("bert", 2), device="cpu")
    TOKEN_CACHE.clear()
    predicted = system.predict(TEXTS)
    assert (TOKEN_CACHE.misses, TOKEN_CACHE.hits) == (2, 1)  # the repeated text is a hit
    results = system.fisher(TEXTS)
    assert (TOKEN_CACHE.misses, TOKEN_CACHE.hits) == (2, 4)
    # λmax's forward pass on BERT is fim_engine.bert_pass's: the same sums in another order.
    np.testing.assert_allclose(
        [r.probabilities for r in results], predicted.probabilities, rtol=0, atol=1e-6
    )


def test_systems_with_the_same_tokenizer_share_entries_and_others_do_not(model_dir):
    first = load_system(model_dir("bert", 2), device="cpu")
    second = load_system(model_dir("bert", 3), device="cpu")  # same tiny tokenizer files
    other = load_system(model_dir("cnn", 2), device="cpu")
    assert first.backend.tokenizer_key == second.backend.tokenizer_key
    assert other.backend.tokenizer_key != first.backend.tokenizer_key
    TOKEN_CACHE.clear()
    first.predict(TEXTS)
    second.predict(TEXTS)
    assert TOKEN_CACHE.misses == 2
    other.predict(TEXTS)
    assert TOKEN_CACHE.misses == 4


def test_cached_tokens_equal_fresh_ones_and_the_cache_is_bounded(model_dir):
    system = load_system(model_dir("bert", 2), device="cpu")
    cache = TokenCache(max_entries=2)
    texts = ["one", "two words", "three more words"]
    tokenize = system.backend.tokenize
    first = cache.tokenize("k", texts, system.max_length, tokenize)
    assert first == tokenize(texts, system.max_length)
    assert len(cache._items) == 2
    again = cache.tokenize("k", texts[:1], system.max_length, tokenize)  # evicted: recomputed
    assert again == first[:1] and cache.misses == 4
    shorter = cache.tokenize("k", ["three more words"], 3, tokenize)
    assert shorter[0].truncated and not first[2].truncated
