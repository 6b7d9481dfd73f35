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

**Sentence pairs** (:class:`fim_engine.SentencePair`): ``editable`` (``"premise"``,
``"hypothesis"``, ``"both"``; default the guide's own, :mod:`fim_engine.sentence_pairs`) says
which segment's words the guide's leverage ranks and edits go into. Each candidate edits one
word of one segment, made on that segment's text alone (the clause rules of antonyms ask
that segment), and is verified on every system as the whole pair, the other segment
unchanged; a suggestion says which segment it edits (``segment``), its ``edit`` offsets point
into that segment and its ``text`` is that segment edited (``item`` is the whole pair).

Example:
    >>> report = suggest("a gorgeous , witty film", {"cnn": cnn, "minilm": minilm}, top_k=3)
    >>> [(s.text, s.source, s.changed) for s in report.suggestions][:2]
    [('a gorgeous , humorous film', 'synonym', ['cnn']), ('a ugly , witty film', 'antonym', [])]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from edits.claims import ANTONYM, CHANGES, KINDS, NEIGHBOUR, PROBE, SYNONYM
from edits.perturbations import (
    Perturbation,
    Replacement,
    antonym_replacements,
    is_content_word,
    label_change_allowed,
    substitution,
    synonym_replacements,
)
from edits.wordnet import WordNet, load_wordnet
from fim_engine.neighbours import NeighbourTable, neighbour_table, word_items
from fim_engine.sentence_pairs import (
    SentencePair,
    TextItem,
    as_item,
    as_items,
    check_editable,
    segment_text,
    with_segment,
)
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
    text: TextItem,
    systems: Mapping[str, System],
    *,
    guide: str | None = None,
    words: int = 3,
    top_k: int = 5,
    neighbours: int = 10,
    senses: int = 1,
    sources: Sequence[str] = SUGGESTION_SOURCES,
    wordnet: WordNet | None = None,
    editable: str | None = None,
) -> SuggestionReport:
    """Verified single-word substitutions for ``text`` (see the module docstring).

    Args:
        text: the original: a text, or a :class:`fim_engine.SentencePair` (a
            ``(premise, hypothesis)`` tuple is one).
        systems: name → loaded :class:`fim_engine.System`; every suggestion is verified on each.
        guide: the name of the system that supplies λmax, v and leverage (default: the first).
        words: how many of the highest-leverage content words to edit.
        top_k: at most this many label-preserving and this many label-changing suggestions.
        neighbours: embedding neighbours considered per word.
        senses: WordNet senses per word for synonyms (the most frequent of its reading in the
            sentence); antonyms use the first sense only.
        sources: any of ``"synonym"``, ``"antonym"``, ``"neighbour"``.
        wordnet: a loaded :class:`edits.wordnet.WordNet` (default: :func:`load_wordnet`).
        editable: a sentence pair's segment(s) edits go into (``"premise"``,
            ``"hypothesis"``, ``"both"``); default the guide's own (``System.editable``).

    Raises:
        ValueError: no systems, an unknown guide or source, a negative count, an ``editable``
            that is not a segment of the item.
        WordNetMissingError: WordNet sources asked for and the WordNet files are absent.

    Example:
        >>> report = suggest("a gorgeous , witty film", {"cnn": system})
        >>> report.suggestions[0].outcomes["cnn"].changed
        True
        >>> pair = SentencePair("A man plays a guitar.", "A man makes music.")
        >>> suggest(pair, {"nli": nli}, editable="hypothesis").suggestions[0].segment
        'hypothesis'
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
        editable=editable,
    )[0]


def suggest_many(
    texts: Sequence[TextItem],
    systems: Mapping[str, System],
    *,
    guide: str | None = None,
    words: int = 3,
    top_k: int = 5,
    neighbours: int = 10,
    senses: int = 1,
    sources: Sequence[str] = SUGGESTION_SOURCES,
    wordnet: WordNet | None = None,
    editable: str | None = None,
) -> list[SuggestionReport]:
    """:func:`suggest` for many originals (texts or sentence pairs) at once, in input order;
    the forward passes that verify the suggestions run batched per system."""
    guide_name = _check_arguments(systems, guide, words, top_k, neighbours, senses, sources)
    check_editable(editable)
    items = as_items(texts)
    if not items:
        return []
    if wordnet is None and ({SYNONYM, ANTONYM} & set(sources)):
        wordnet = load_wordnet()
    guide_system = systems[guide_name]
    contexts = guide_system.word_directions(items, editable=editable)
    originals = {name: _predictions(system, items) for name, system in systems.items()}
    table = neighbour_table(guide_system) if NEIGHBOUR in sources and neighbours else None
    choices = _Choices(words, neighbours, senses, tuple(sources))

    candidates_per_text = [
        _candidates(context, guide_name, table, wordnet, choices) for context in contexts
    ]
    replacement_embeddings = _replacement_embeddings(
        guide_system,
        sorted({c.perturbation.edit.replacement for cs in candidates_per_text for c in cs}),
    )
    kept_per_text = [
        _rank(context, candidates, replacement_embeddings, top_k)
        for context, candidates in zip(contexts, candidates_per_text, strict=True)
    ]
    edited = sorted({c.item for kept in kept_per_text for c in kept}, key=_item_order)
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


def _item_order(item: TextItem) -> tuple[bool, tuple[str, ...]]:
    """Texts in text order, then pairs (a fixed order, whatever the hash seed)."""
    return (
        isinstance(item, SentencePair),
        tuple(item) if isinstance(item, SentencePair) else (item,),
    )


def _report(
    context: TextDirections[TextItem],
    kept: list[_Candidate],
    guide_name: str,
    predictions: dict[str, SystemPrediction],
    verified: dict[str, dict[TextItem, SystemPrediction]],
) -> SuggestionReport:
    """One original's report: its kept candidates with every system's verified outcome."""
    suggestions = []
    for c in kept:
        outcomes = {}
        for name, original in predictions.items():
            after = verified[name][c.item]
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
                # A probe claims nothing: not that it keeps the label either.
                keeps_label=None if c.perturbation.kind == PROBE else c.perturbation.keeps_label,
                label_unverified=c.perturbation.kind == CHANGES,
                probe=c.perturbation.kind == PROBE,
                rationale=c.perturbation.rationale,
                projection=c.projection,
                predicted_kl=c.predicted_kl,
                outcomes=outcomes,
                item=c.item,
                segment=c.segment,
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
        word_segments=context.word_segments,
    )


def check_variant(
    original: TextItem,
    variant: TextItem,
    systems: Mapping[str, System],
    *,
    editable: str | None = None,
) -> VariantCheck:
    """Run a draft variant (the breaker's own edit) and its original through every system.

    ``original`` and ``variant`` are both texts or both sentence pairs; ``editable`` says
    which segments of a pair λmax counts (default: each system's own). Returns each system's
    label, probabilities and λmax on both items and whether the label changed. Whether that
    is a break depends on the labels the breaker intends (see the module docstring); the
    scoring library holds that rule.

    Raises ``ValueError`` for no systems, or a text checked against a pair.

    Example:
        >>> check = check_variant("a good film", "a good film , not", {"cnn": system})
        >>> check.outcomes["cnn"].changed, check.outcomes["cnn"].variant_lambda_max
        (False, 0.031)
    """
    if not systems:
        raise ValueError("check_variant needs at least one system")
    original, variant = as_item(original), as_item(variant)
    if isinstance(original, SentencePair) != isinstance(variant, SentencePair):
        raise ValueError("a draft variant is of its original's kind: two texts, or two pairs")
    outcomes = {}
    for name, system in systems.items():
        before, after = system.fisher([original, variant], hints=False, editable=editable)
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


@dataclass(frozen=True)
class _Candidate:
    perturbation: Perturbation  # of the edited segment's text
    word: int
    item: TextItem  # the whole variant: the text, or the pair with that segment edited
    segment: str | None = None
    projection: float = 0.0
    predicted_kl: float = 0.0


@dataclass(frozen=True)
class _Choices:
    """How many words to edit and which candidates to consider at each."""

    words: int
    neighbours: int
    senses: int
    sources: tuple[str, ...]


def _candidates(
    context: TextDirections[TextItem],
    guide_name: str,
    table: NeighbourTable | None,
    wordnet: WordNet | None,
    choices: _Choices,
) -> list[_Candidate]:
    if context.spans is None:
        # A slow tokenizer gives no character offsets: there is no place to put an edit.
        return []
    segments: list[str | None] = [None] * len(context.words)
    if context.word_segments is not None:
        segments = list(context.word_segments)
    editable = [w for w, word in enumerate(context.words) if is_content_word(word)]
    # Ties in leverage go to the earlier word: nothing here depends on hash order.
    chosen = sorted(editable, key=lambda w: (-context.leverage[w], w))[: choices.words]
    candidates = []
    for w in chosen:
        segment = segments[w]
        text = segment_text(context.text, segment)
        word = context.words[w]
        # The words around it in its own segment (a pair's other segment is another text).
        around = {
            "before": context.words[w - 1] if w > 0 and segments[w - 1] == segment else "",
            "after": context.words[w + 1]
            if w + 1 < len(context.words) and segments[w + 1] == segment
            else "",
        }
        found: list[Replacement] = []
        if ANTONYM in choices.sources and label_change_allowed(text):
            found += antonym_replacements(word, wordnet=wordnet, senses=1, probes=True, **around)
        if SYNONYM in choices.sources:
            found += synonym_replacements(word, wordnet=wordnet, senses=choices.senses, **around)
        tokens = context.tokens(w)
        if table is not None and len(tokens) == 1:
            found += table.nearest(tokens[0], word, choices.neighbours, f"system {guide_name!r}")
        start, end = context.spans[w]
        for replacement in _one_per_word(word, found):
            perturbation = substitution(text, start, end, replacement)
            item = with_segment(context.text, segment, perturbation.text)
            candidates.append(_Candidate(perturbation, w, item, segment))
    return candidates


def _one_per_word(word: str, found: list[Replacement]) -> list[Replacement]:
    """Each replacement word once (antonym, then synonym, then neighbour), the word itself
    left out, in the order of their lower-cased words."""
    best: dict[str, Replacement] = {}
    for replacement in found:
        key = replacement.word.lower()
        if key == word.lower():
            continue
        if key not in best or (
            _SOURCE_PRIORITY[replacement.source] < _SOURCE_PRIORITY[best[key].source]
        ):
            best[key] = replacement
    return [best[key] for key in sorted(best)]


def _rank(
    context: TextDirections[TextItem],
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
                candidate.item,
                candidate.segment,
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
            items, editable = word_items(system, chunk)
            batch = system.encode(items, editable=editable)
            embeds = system.input_embeddings(batch).double()
            keep = batch.editable.unsqueeze(-1).double()
            means = (embeds * keep).sum(dim=1) / keep.sum(dim=1).clamp(min=1)
            found.update(zip(chunk, means.cpu().numpy(), strict=True))
    return found


def _predictions(system: System, texts: list[TextItem]) -> list[SystemPrediction]:
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
