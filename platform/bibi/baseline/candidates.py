"""The baseline breaker's candidate pairs: the hosted systems loaded, every edit of every
original with its gold label by construction (``breaker``'s module docstring has the table),
the filters that keep those labels believable, and the verification by the ``scoring``
library's break rule.

An item of several texts (a sentence pair) is edited in the texts the task lets breakers
edit (``editable_text``): each candidate edits one of them (``Candidate.segment``), the guided
suggestions over those texts' words (``fim_engine.suggest_many`` with the task's model
options), names, typos and negations on each such text; the others stay the original's, and
every system is run on the whole items.

Loads models (``bibi.systems.runner``, and with it torch): never imported by the web process.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
from django.core.exceptions import ValidationError

import scoring
from bibi.evaluation.matrix import ScoredVersion, active_versions
from bibi.guidance.ranking import RankedOriginal, guide_order
from bibi.sharedtasks.models import SharedTask
from bibi.systems.errors import ValidationFailed
from bibi.systems.models import SystemVersion
from bibi.systems.runner import model_call, version_model
from bibi.tasktypes import TaskType
from bibi.tasktypes.items import Item
from bibi.tasktypes.rules import CheckedPair, PairInput
from edits.claims import ANTONYM, CHANGES, NAME, NEGATION, SYNONYM, TYPO, edit_claim
from edits.perturbations import (
    Perturbation,
    is_content_word,
    keyboard_typos,
    name_swaps,
    negation_edits,
)
from edits.wordnet import load_wordnet
from fim_engine.sentence_pairs import SEGMENTS
from fim_engine.suggestions import SuggestionReport, suggest_many

# Round-robin order of the sources, and the order of preference of one text made twice.
# Embedding neighbours are probes of a model, not pairs with a label: the breaker makes none.
SOURCES = (SYNONYM, ANTONYM, NEGATION, NAME, TYPO)
# Strategy tags (the 2017 OSU taxonomy the default tag list follows) a source's pair carries,
# when the task's strategy list has them.
SOURCE_TAGS = {
    SYNONYM: ("semantics",),
    ANTONYM: ("semantics",),
    NAME: ("world_knowledge",),
    TYPO: ("morphosyntax",),
    NEGATION: ("morphosyntax",),
}
# Guided suggestions per original: edited words, and kept label-keeping / label-changing ones.
SUGGESTED_WORDS = 3
SUGGESTED_PER_KIND = 3
TYPO_WORDS = 3


@dataclass
class Candidate:
    ranked: RankedOriginal
    perturbation: Perturbation  # of the text of ``segment``
    label: str
    projection: float = 0.0
    checked: CheckedPair | None = None
    broken: tuple[str, ...] = ()
    # The ``Example`` field of the text the edit is in (a sentence pair's ``text_b``).
    segment: str = "text"
    # The original's and the variant's items as checked (set with ``checked``).
    items: tuple[Item, Item] | None = None
    # Span tasks: the variant's answers, and whether they are a guess (an edit inside one).
    answers: list[dict[str, Any]] | None = None
    moves_answer: bool = False

    @property
    def source(self) -> str:
        return self.perturbation.source

    @property
    def unverified(self) -> bool:
        """A machine-made label change or a guessed answer (an answer-moving edit changes what
        a span item claims, ``edits.claims``): stored ``label_unverified``."""
        kind = CHANGES if self.moves_answer else self.perturbation.kind
        return edit_claim(kind).label_unverified

    @property
    def text(self) -> str:
        """The variant's first text as the checks normalized it (what is stored and scored)."""
        assert self.checked is not None
        return self.checked.variant_text

    @property
    def text_b(self) -> str:
        """The variant's second text, as checked ('' for an item of one text)."""
        assert self.checked is not None
        return str(self.checked.fields.get("variant_text_b", ""))


@dataclass(frozen=True)
class Hosted:
    version: ScoredVersion
    name: str
    system: Any  # a fim_engine.System; a fim_engine.SpanSystem on a span task
    mapping: Mapping[str, str]

    @property
    def key(self) -> str:
        return self.version.key


def hosted_systems(shared_task: SharedTask) -> list[Hosted]:
    """Every system whose active version is a ready hosted one, loaded, in system order."""
    scored = [entry for entry in active_versions(shared_task=shared_task) if entry.hosted]
    if not scored:
        raise ValidationError(
            "This shared task has no ready hosted system: the baseline breaker verifies its "
            "pairs with the hosted models, so it needs at least one."
        )
    versions = SystemVersion.objects.select_related("system__team").in_bulk(
        [entry.version_id for entry in scored]
    )
    hosted = []
    for entry in scored:
        version = versions[entry.version_id]
        # Rationales are public once results are: an anonymous team keeps its alias there.
        name = f"{version.system.team.public_name} / {entry.system_name}"
        try:
            system = version_model(version)
        except ValidationFailed as failure:
            raise ValidationError(
                f"The model of {name} (version {entry.version_number}) could not be loaded: "
                f"{failure.detail}"
            ) from None
        hosted.append(Hosted(entry, name, system, version.label_mapping))
    return hosted


def guide_of(ranked: RankedOriginal, hosted: Sequence[Hosted]) -> str:
    """The key of the original's guide (``guidance.guide_order`` on the ranking's
    percentiles); the first hosted system when none has the original's λmax."""
    keys = {entry.version.system_id: entry.key for entry in hosted}
    order = guide_order(
        {view.system_id: view.percentile for view in ranked.systems if view.system_id in keys}
    )
    return keys[order[0]] if order else hosted[0].key


def by_guide(
    ranked: Sequence[RankedOriginal], hosted: Sequence[Hosted]
) -> list[tuple[str, list[RankedOriginal]]]:
    """The originals grouped by their guide's key (``guide_of``), in key order: each group's
    edits are placed by one model, in one batch."""
    groups: dict[str, list[RankedOriginal]] = defaultdict(list)
    for entry in ranked:
        groups[guide_of(entry, hosted)].append(entry)
    return sorted(groups.items())


def candidates_make(
    ranked: Sequence[RankedOriginal],
    hosted: Sequence[Hosted],
    *,
    shared_task: SharedTask,
    seed: int,
) -> list[Candidate]:
    """Every edit of every original, with its gold label by construction; in a fixed order."""
    wordnet = load_wordnet()
    reports = _guided(ranked, hosted, shared_task, wordnet)
    kind = shared_task.kind
    fields = kind.segment_fields
    labels = tuple(shared_task.labels)
    candidates = []
    for entry in ranked:
        example = entry.example
        report = reports[example.id]
        made_here: list[tuple[str, Perturbation, float]] = [
            (
                fields[SEGMENTS.index(s.segment)] if s.segment else fields[0],
                Perturbation(s.text, s.edit, s.source, s.keeps_label, s.rationale),
                s.projection,
            )
            for s in report.suggestions
            if not s.probe and (s.source != ANTONYM or s.projection > 0)
        ]
        levered = levered_words(report.leverage, TYPO_WORDS, segments=report.word_segments)
        for field in kind.editable_fields(shared_task.editable_text):
            text = getattr(example, field)
            name = SEGMENTS[fields.index(field)] if report.word_segments else None
            made_here += [(field, p, 0.0) for p in name_swaps(text, wordnet=wordnet)]
            made_here += [
                (field, p, 0.0)
                for p in keyboard_typos(text, per_word=1, seed=seed)
                if (name, p.edit.original.lower()) in levered
            ]
            made_here += [(field, p, 0.0) for p in negation_edits(text)]
        for field, perturbation, projection in made_here:
            # What the edit claims (edits.claims): none where the label set has no opposite.
            label = edit_claim(perturbation.kind, original_label=example.label, labels=labels).label
            if label is not None:
                candidates.append(Candidate(entry, perturbation, label, projection, segment=field))
    return candidates


def _guided(
    ranked: Sequence[RankedOriginal],
    hosted: Sequence[Hosted],
    shared_task: SharedTask,
    wordnet: Any,
) -> dict[int, SuggestionReport]:
    """Each original's guided suggestions (synonyms, antonyms) by example id, each group of
    originals through its guide once; a sentence pair's in the texts breakers may edit."""
    kind = shared_task.kind
    systems = {entry.key: entry.system for entry in hosted}
    reports: dict[int, SuggestionReport] = {}
    for guide, group in by_guide(ranked, hosted):
        try:
            made = model_call(
                suggest_many,
                [kind.model_input(kind.item(entry.example)) for entry in group],
                {guide: systems[guide]},
                words=SUGGESTED_WORDS,
                top_k=SUGGESTED_PER_KIND,
                sources=(SYNONYM, ANTONYM),
                wordnet=wordnet,
                **kind.model_options(shared_task),
            )
        except ValidationFailed as failure:
            raise ValidationError(
                f"A model failed while edits were suggested: {failure.detail}"
            ) from None
        reports.update(
            (entry.example.id, report) for entry, report in zip(group, made, strict=True)
        )
    return reports


def levered_words(
    leverage: Sequence[tuple[str, float]],
    count: int,
    *,
    segments: Sequence[str] | None = None,
) -> set[tuple[str | None, str]]:
    """The ``count`` content words of the original whose deletion moves the guide most, from
    its word leverage (label reports and span Fisher results alike), as (segment, lower-cased
    word): ``segments`` names each word's segment for a sentence pair (``word_segments``;
    None for a text)."""
    named = segments if segments is not None else [None] * len(leverage)
    content = [
        (score, segment, word.lower())
        for (word, score), segment in zip(leverage, named, strict=True)
        if is_content_word(word)
    ]
    top = sorted(content, key=lambda item: -item[0])[:count]
    return {(segment, word) for _, segment, word in top}


def pair_input(candidate: Candidate, *, row: int, hosted: int = 0) -> PairInput:
    ranked = candidate.ranked
    rationale = candidate.perturbation.rationale
    if row:
        broke = (
            f"broke {', '.join(candidate.broken)} when made"
            if candidate.broken
            else f"broke none of the {hosted} ready hosted systems when made"
        )
        rationale = (
            f"Baseline breaker ({candidate.source}): {rationale}. The original is ranked "
            f"{ranked.rank} nearest the boundary; the pair {broke}."
        )
    if row and candidate.moves_answer:
        rationale += (
            " Answer unverified: the edit is inside the answer, and the variant's answer is the "
            "original's stretched over it, a guess nobody has checked; the pair counts only "
            "once validation confirms it."
        )
    elif row and candidate.unverified:
        rationale += (
            " Label unverified: the new label is the edit's intent, which nobody has checked; "
            "the pair counts only once validation confirms it."
        )
    return PairInput(
        row=row,
        original_id=ranked.example.external_id,
        # The edited text; on an item of several texts the others are left out: the
        # original's (``LabelledTaskType.check_pair``).
        **{f"variant_{candidate.segment}": candidate.perturbation.text},
        variant_label=candidate.label,
        rationale=rationale,
        tags=SOURCE_TAGS[candidate.source],
        source_id=f"baseline-{row}" if row else "",
        variant_answers="" if candidate.answers is None else json.dumps(candidate.answers),
        label_unverified=candidate.unverified,
    )


def verify(
    candidates: Sequence[Candidate],
    hosted: Sequence[Hosted],
    *,
    kind: TaskType,
    labels: Sequence[str],
) -> None:
    """Run every system on both items of every candidate (as checked: ``Candidate.items``)
    and set ``broken`` by the scoring library's break rule."""
    pairs = [candidate.items for candidate in candidates]
    assert all(pair is not None for pair in pairs)
    items = {kind.item_key(item): item for pair in pairs if pair is not None for item in pair}
    keys = sorted(items)
    rows: list[dict[str, Any]] = []
    for entry in hosted:
        try:
            batch = model_call(entry.system.predict, [kind.model_input(items[k]) for k in keys])
        except ValidationFailed as failure:
            raise ValidationError(f"The model of {entry.name} failed: {failure.detail}") from None
        rows += [
            {"system": entry.key, "text": key, "label": entry.mapping[label]}
            for key, label in zip(keys, batch.labels, strict=True)
        ]
    frame = pd.DataFrame(
        {
            "pair_id": range(len(candidates)),
            "team": "baseline",
            "original_id": [c.ranked.example.external_id for c in candidates],
            "original_text": [kind.item_key(pair[0]) for pair in pairs if pair is not None],
            "original_label": [c.ranked.example.label for c in candidates],
            "variant_text": [kind.item_key(pair[1]) for pair in pairs if pair is not None],
            "variant_label": [c.label for c in candidates],
        }
    )
    breaks = scoring.find_breaks(frame, pd.DataFrame(rows), labels=list(labels))
    names = {entry.key: entry.name for entry in hosted}
    for column, pair_id in enumerate(breaks.pairs["pair_id"]):
        candidates[int(pair_id)].broken = tuple(
            names[system] for row, system in enumerate(breaks.systems) if breaks.broken[row, column]
        )
