"""Suggested edits where a system is most sensitive, each verified by real forward passes.

:func:`suggest` takes an original text and one or more loaded systems. One of them, the
*guide* (the first unless named), supplies λmax, the top eigenvector v of its Fisher metric and
the word leverage (:class:`fim_engine.FisherResult`). Then:

1. **Words.** The ``words`` content words (alphabetic, not a function word: never punctuation)
   with the highest deletion leverage are the places to edit; equal leverage goes to the
   earlier word.
2. **Candidates** at each of them, one word for one word: WordNet synonyms (label-keeping) and
   direct WordNet antonyms of the word's first sense (only in a text of one clause without
   negation or lists: :func:`edits.perturbations.label_change_allowed`), both through the
   fluency gate of :mod:`edits.fluency` (same part of speech and inflection, zipf >= 3,
   first senses, no proper names); and the ``neighbours`` nearest vocabulary words of the word
   in the guide's own input-embedding space by cosine. An antonym is label-changing only when
   the word and it carry opposite opinions in the sentiment lexicon of
   :mod:`edits.opinion` (*good* → *bad*). Neighbours, and antonyms without opposite
   opinions (*young* → *old*), are **probes of the model**: a neighbour is as often the word's
   opposite or an odd word as a synonym, so they claim no label (``probe``) and are never
   offered as pairs. A
   word the guide's tokenizer splits into several pieces has no neighbours (its pieces'
   neighbours are pieces, not words). A replacement found by several sources keeps one:
   antonym, then synonym, then neighbour.
3. **Ranking** by the projection of the edit on v: with e′ the guide's input embedding of the
   replacement (the mean of its pieces' embeddings when it has several) and e_t those of the
   word's tokens, projection = Σ_t v_t·(e′ − e_t), oriented so that a positive value moves the
   guide towards its decision boundary (away from its predicted label) to first order, and the
   first-order KL divergence is ½ λmax projection². Candidates are ranked by projection,
   largest first (ties by word position, then text: the output never depends on hash order or
   ``PYTHONHASHSEED``), and the ``top_k`` best label-keeping, label-changing and probe ones are
   kept. A label-changing suggestion is ``label_unverified``: its new label is a guess that
   only validation can confirm (the kinds and what each claims: :mod:`edits.claims`). When the replacement has a different number of pieces than
   the word, the first-order estimate ignores the shift of later positions; verification
   does not.
4. **Verification**: every kept suggestion is run through every system (``System.predict``),
   reporting its label and probabilities and whether its prediction differs from the one on
   the original.

For a label-preserving suggestion a changed prediction is a break of that system if it was
right on the original; for a label-changing one a break is a prediction that does *not*
change. :func:`check_variant` runs a breaker's own draft variant through every system.

Example:
    >>> report = suggest("a gorgeous , witty film", {"cnn": cnn, "minilm": minilm}, top_k=3)
    >>> [(s.text, s.source, s.changed) for s in report.suggestions][:2]
    [('a gorgeous , humorous film', 'synonym', ['cnn']), ('a ugly , witty film', 'antonym', [])]
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from edits.claims import ANTONYM, CHANGES, KEEPS_LABEL, KINDS, NEIGHBOUR, PROBE, SYNONYM
from edits.perturbations import (
    Perturbation,
    Replacement,
    antonym_replacements,
    is_content_word,
    label_change_allowed,
    match_case,
    substitution,
    synonym_replacements,
)
from edits.wordnet import WordNet, load_wordnet
from edits.words import split_words
from fim_engine.suggestion_reports import (
    Suggestion,
    SuggestionReport,
    SystemOutcome,
    SystemPrediction,
    VariantCheck,
    VariantOutcome,
)
from fim_engine.system import System, TextDirections

SUGGESTION_SOURCES = (SYNONYM, ANTONYM, NEIGHBOUR)
# When two sources offer the same word, the more specific claim about the label wins.
_SOURCE_PRIORITY = {ANTONYM: 0, SYNONYM: 1, NEIGHBOUR: 2}


def suggest(
    text: str,
    systems: Mapping[str, System],
    *,
    guide: str | None = None,
    words: int = 3,
    top_k: int = 5,
    neighbours: int = 10,
    senses: int = 1,
    sources: Sequence[str] = SUGGESTION_SOURCES,
    wordnet: WordNet | None = None,
) -> SuggestionReport:
    """Verified single-word substitutions for ``text`` (see the module docstring).

    Args:
        text: the original.
        systems: name → loaded :class:`fim_engine.System`; every suggestion is verified on each.
        guide: the name of the system that supplies λmax, v and leverage (default: the first).
        words: how many of the highest-leverage content words to edit.
        top_k: at most this many label-preserving and this many label-changing suggestions.
        neighbours: embedding neighbours considered per word.
        senses: WordNet senses per word for synonyms (the most frequent of its reading in the
            sentence); antonyms use the first sense only.
        sources: any of ``"synonym"``, ``"antonym"``, ``"neighbour"``.
        wordnet: a loaded :class:`edits.wordnet.WordNet` (default: :func:`load_wordnet`).

    Raises:
        ValueError: no systems, an unknown guide or source, a negative count.
        WordNetMissingError: WordNet sources asked for and the WordNet files are absent.

    Example:
        >>> report = suggest("a gorgeous , witty film", {"cnn": system})
        >>> report.suggestions[0].outcomes["cnn"].changed
        True
    """
    return suggest_many(
        [text],
        systems,
        guide=guide,
        words=words,
        top_k=top_k,
        neighbours=neighbours,
        senses=senses,
        sources=sources,
        wordnet=wordnet,
    )[0]


def suggest_many(
    texts: Sequence[str],
    systems: Mapping[str, System],
    *,
    guide: str | None = None,
    words: int = 3,
    top_k: int = 5,
    neighbours: int = 10,
    senses: int = 1,
    sources: Sequence[str] = SUGGESTION_SOURCES,
    wordnet: WordNet | None = None,
) -> list[SuggestionReport]:
    """:func:`suggest` for many originals at once, in input order; the forward passes that
    verify the suggestions run batched per system."""
    guide_name = _check_arguments(systems, guide, words, top_k, neighbours, senses, sources)
    texts = list(texts)
    if not texts:
        return []
    if wordnet is None and ({SYNONYM, ANTONYM} & set(sources)):
        wordnet = load_wordnet()
    guide_system = systems[guide_name]
    contexts = guide_system.word_directions(texts)
    originals = {name: _predictions(system, texts) for name, system in systems.items()}
    table = _neighbour_table(guide_system) if NEIGHBOUR in sources and neighbours else None

    candidates_per_text = []
    for context in contexts:
        candidates = _candidates(
            context, guide_name, table, wordnet, words, neighbours, senses, sources
        )
        candidates_per_text.append(candidates)
    replacement_embeddings = _replacement_embeddings(
        guide_system,
        sorted({c.perturbation.edit.replacement for cs in candidates_per_text for c in cs}),
    )
    kept_per_text = [
        _rank(context, candidates, replacement_embeddings, top_k)
        for context, candidates in zip(contexts, candidates_per_text, strict=True)
    ]
    edited = sorted({c.perturbation.text for kept in kept_per_text for c in kept})
    verified = {
        name: dict(zip(edited, _predictions(system, edited), strict=True))
        for name, system in systems.items()
    }

    return [
        _report(
            context, kept, guide_name, {name: originals[name][index] for name in systems}, verified
        )
        for index, (context, kept) in enumerate(zip(contexts, kept_per_text, strict=True))
    ]


def _report(
    context: TextDirections,
    kept: list[_Candidate],
    guide_name: str,
    predictions: dict[str, SystemPrediction],
    verified: dict[str, dict[str, SystemPrediction]],
) -> SuggestionReport:
    """One original's report: its kept candidates with every system's verified outcome."""
    suggestions = []
    for c in kept:
        outcomes = {}
        for name, original in predictions.items():
            after = verified[name][c.perturbation.text]
            outcomes[name] = SystemOutcome(
                label=after.label,
                probabilities=after.probabilities,
                changed=after.label != original.label,
            )
        suggestions.append(
            Suggestion(
                text=c.perturbation.text,
                edit=c.perturbation.edit,
                word=c.word,
                source=c.perturbation.source,
                keeps_label=c.perturbation.keeps_label,
                label_unverified=c.perturbation.kind == CHANGES,
                probe=c.perturbation.kind == PROBE,
                rationale=c.perturbation.rationale,
                projection=c.projection,
                predicted_kl=c.predicted_kl,
                outcomes=outcomes,
            )
        )
    return SuggestionReport(
        text=context.text,
        guide=guide_name,
        lambda_max=context.directions.lambda_max,
        label=context.label,
        truncated=context.truncated,
        leverage=list(zip(context.words, map(float, context.leverage), strict=True)),
        predictions=predictions,
        suggestions=suggestions,
    )


def check_variant(original: str, variant: str, systems: Mapping[str, System]) -> VariantCheck:
    """Run a draft variant (the breaker's own edit) and its original through every system.

    Returns each system's label, probabilities and λmax on both texts and whether the label
    changed. Whether that is a break depends on the labels the breaker intends (see the
    module docstring); the scoring library holds that rule.

    Example:
        >>> check = check_variant("a good film", "a good film , not", {"cnn": system})
        >>> check.outcomes["cnn"].changed, check.outcomes["cnn"].variant_lambda_max
        (False, 0.031)
    """
    if not systems:
        raise ValueError("check_variant needs at least one system")
    outcomes = {}
    for name, system in systems.items():
        before, after = system.fisher([original, variant], hints=False)
        labels = system.labels
        outcomes[name] = VariantOutcome(
            original=SystemPrediction(before.label, _named(labels, before.probabilities)),
            original_lambda_max=before.lambda_max,
            variant=SystemPrediction(after.label, _named(labels, after.probabilities)),
            variant_lambda_max=after.lambda_max,
            changed=before.label != after.label,
            truncated=before.truncated or after.truncated,
        )
    return VariantCheck(original, variant, outcomes)


def embedding_neighbours(system: System, word: str, *, k: int = 10) -> list[Replacement]:
    """The ``k`` vocabulary words nearest to ``word`` in ``system``'s input-embedding space
    (cosine), content words only, nearest first, in the word's case.

    Only a word that the system encodes as one token has neighbours (``[]`` otherwise).
    """
    (item,) = system.backend.tokenize([word], system.max_length)
    ids = [i for i, w in zip(item.input_ids, item.word_index, strict=True) if w >= 0]
    if len(ids) != 1:
        return []
    return _neighbour_table(system).nearest(ids[0], word, k, "the system")


def neighbour_swaps(text: str, system: System, *, k: int = 5) -> list[Perturbation]:
    """One perturbation per word of ``text`` (:func:`edits.words.split_words`) and each of
    its ``k`` embedding neighbours in ``system`` (:func:`embedding_neighbours`)."""
    return [
        substitution(text, start, end, replacement)
        for word, start, end in split_words(text, lowercase=False)
        if is_content_word(word)
        for replacement in embedding_neighbours(system, word, k=k)
    ]


@dataclass(frozen=True)
class _Candidate:
    perturbation: Perturbation
    word: int
    projection: float = 0.0
    predicted_kl: float = 0.0


def _candidates(
    context: TextDirections,
    guide_name: str,
    table: _NeighbourTable | None,
    wordnet: WordNet | None,
    words: int,
    neighbours: int,
    senses: int,
    sources: Sequence[str],
) -> list[_Candidate]:
    if context.spans is None:
        # A slow tokenizer gives no character offsets: there is no place to put an edit.
        return []
    editable = [w for w, word in enumerate(context.words) if is_content_word(word)]
    # Ties in leverage go to the earlier word: nothing here depends on hash order.
    chosen = sorted(editable, key=lambda w: (-context.leverage[w], w))[:words]
    antonyms = ANTONYM in sources and label_change_allowed(context.text)
    candidates = []
    for w in chosen:
        word = context.words[w]
        around = {
            "before": context.words[w - 1] if w > 0 else "",
            "after": context.words[w + 1] if w + 1 < len(context.words) else "",
        }
        found: list[Replacement] = []
        if antonyms:
            found += antonym_replacements(word, wordnet=wordnet, senses=1, probes=True, **around)
        if SYNONYM in sources:
            found += synonym_replacements(word, wordnet=wordnet, senses=senses, **around)
        tokens = context.tokens(w)
        if table is not None and len(tokens) == 1:
            found += table.nearest(tokens[0], word, neighbours, f"system {guide_name!r}")
        best: dict[str, Replacement] = {}
        for replacement in found:
            key = replacement.word.lower()
            if key == word.lower():
                continue
            if key not in best or (
                _SOURCE_PRIORITY[replacement.source] < _SOURCE_PRIORITY[best[key].source]
            ):
                best[key] = replacement
        start, end = context.spans[w]
        candidates += [
            _Candidate(substitution(context.text, start, end, best[key]), w) for key in sorted(best)
        ]
    return candidates


def _rank(
    context: TextDirections,
    candidates: list[_Candidate],
    embeddings: dict[str, np.ndarray],
    top_k: int,
) -> list[_Candidate]:
    scored = []
    for candidate in candidates:
        projection = float(
            context.directions.projection(
                embeddings[candidate.perturbation.edit.replacement], candidate.word
            )
        )
        scored.append(
            _Candidate(
                candidate.perturbation,
                candidate.word,
                projection,
                float(context.directions.kl(np.asarray(projection))),
            )
        )
    kept = []
    for kind in KINDS:
        group = [c for c in scored if c.perturbation.kind == kind]
        # Equal projections (two replacements the guide embeds alike) in a fixed order.
        group.sort(key=lambda c: (-c.projection, c.word, c.perturbation.text))
        kept += group[:top_k]
    return kept


def _replacement_embeddings(system: System, replacements: list[str]) -> dict[str, np.ndarray]:
    """Each replacement's input embedding in ``system``: the mean over its tokens."""
    found: dict[str, np.ndarray] = {}
    with torch.inference_mode():
        for start in range(0, len(replacements), system.batch_size):
            chunk = replacements[start : start + system.batch_size]
            batch = system.encode(chunk)
            embeds = system.input_embeddings(batch).double()
            keep = batch.editable.unsqueeze(-1).double()
            means = (embeds * keep).sum(dim=1) / keep.sum(dim=1).clamp(min=1)
            found.update(zip(chunk, means.cpu().numpy(), strict=True))
    return found


def _predictions(system: System, texts: list[str]) -> list[SystemPrediction]:
    batch = system.predict(texts)
    return [
        SystemPrediction(label, _named(batch.label_names, row))
        for label, row in zip(batch.labels, batch.probabilities, strict=True)
    ]


def _named(labels: list[str], probabilities: np.ndarray) -> dict[str, float]:
    return dict(zip(labels, map(float, probabilities), strict=True))


def _check_arguments(
    systems: Mapping[str, System],
    guide: str | None,
    words: int,
    top_k: int,
    neighbours: int,
    senses: int,
    sources: Sequence[str],
) -> str:
    if not systems:
        raise ValueError("suggest needs at least one system")
    if guide is not None and guide not in systems:
        raise ValueError(f"the guide {guide!r} is not one of the systems ({', '.join(systems)})")
    for name, value in (
        ("words", words),
        ("top_k", top_k),
        ("neighbours", neighbours),
        ("senses", senses),
    ):
        if not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    unknown = sorted(set(sources) - set(SUGGESTION_SOURCES))
    if unknown:
        raise ValueError(
            f"unknown suggestion source(s) {', '.join(unknown)}; "
            f"choose from {', '.join(SUGGESTION_SOURCES)}"
        )
    return guide if guide is not None else next(iter(systems))


# Embedding neighbours.


class _NeighbourTable:
    """The unit-normalised input embeddings of a system's content-word vocabulary."""

    def __init__(self, system: System) -> None:
        entries = [(i, w) for i, w in system.vocabulary_words() if is_content_word(w)]
        weight = system.backend.embedding_weight().detach().double()
        self.ids = torch.tensor([i for i, _ in entries], dtype=torch.long, device=weight.device)
        self.words = [w for _, w in entries]
        self.weight = weight
        self.unit = torch.nn.functional.normalize(weight[self.ids], dim=-1)

    def nearest(self, token: int, word: str, k: int, where: str) -> list[Replacement]:
        if not len(self.words) or k == 0:
            return []
        query = torch.nn.functional.normalize(self.weight[token], dim=-1)
        cosine = self.unit @ query
        order = torch.argsort(cosine, descending=True, stable=True).tolist()  # ties by id
        found: list[Replacement] = []
        lowered = word.lower()
        for index in order:
            if len(found) == k:
                break
            candidate = self.words[index]
            if candidate.lower() == lowered:
                continue
            found.append(
                Replacement(
                    match_case(word, candidate),
                    NEIGHBOUR,
                    KEEPS_LABEL[NEIGHBOUR],
                    f"nearest neighbour of {word!r} in the input-embedding space of {where} (cosine "
                    f"{float(cosine[index]):.2f}); meant to keep the label",
                )
            )
        return found


_TABLES: weakref.WeakKeyDictionary[System, _NeighbourTable] = weakref.WeakKeyDictionary()


def _neighbour_table(system: System) -> _NeighbourTable:
    if system not in _TABLES:
        _TABLES[system] = _NeighbourTable(system)
    return _TABLES[system]
