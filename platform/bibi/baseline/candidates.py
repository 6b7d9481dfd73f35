"""The baseline breaker's candidate pairs: the hosted systems loaded, every edit of every
original with its gold label by construction (``breaker``'s module docstring has the table),
the filters that keep those labels believable, and the verification by the ``scoring``
library's break rule.

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
    perturbation: Perturbation
    label: str
    projection: float = 0.0
    checked: CheckedPair | None = None
    broken: tuple[str, ...] = ()
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
        """The variant as the checks normalized it (what is stored and scored)."""
        assert self.checked is not None
        return self.checked.variant_text

    @property
    def original_text(self) -> str:
        assert self.checked is not None
        return self.checked.original.text


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
    ranked: Sequence[RankedOriginal], hosted: Sequence[Hosted], *, labels: Sequence[str], seed: int
) -> list[Candidate]:
    """Every edit of every original, with its gold label by construction; in a fixed order."""
    wordnet = load_wordnet()
    systems = {entry.key: entry.system for entry in hosted}
    reports: dict[int, SuggestionReport] = {}
    for guide, group in by_guide(ranked, hosted):
        sources = (SYNONYM, ANTONYM)
        try:
            made = model_call(
                suggest_many,
                [entry.example.text for entry in group],
                {guide: systems[guide]},
                words=SUGGESTED_WORDS,
                top_k=SUGGESTED_PER_KIND,
                sources=sources,
                wordnet=wordnet,
            )
        except ValidationFailed as failure:
            raise ValidationError(
                f"A model failed while edits were suggested: {failure.detail}"
            ) from None
        reports.update(
            (entry.example.id, report) for entry, report in zip(group, made, strict=True)
        )

    candidates = []
    for entry in ranked:
        example = entry.example
        report = reports[example.id]
        made_here: list[tuple[Perturbation, float]] = [
            (
                Perturbation(s.text, s.edit, s.source, s.keeps_label, s.rationale),
                s.projection,
            )
            for s in report.suggestions
            if not s.probe and (s.source != ANTONYM or s.projection > 0)
        ]
        made_here += [(p, 0.0) for p in name_swaps(example.text, wordnet=wordnet)]
        levered = levered_words(report.leverage, TYPO_WORDS)
        made_here += [
            (p, 0.0)
            for p in keyboard_typos(example.text, per_word=1, seed=seed)
            if p.edit.original.lower() in levered
        ]
        made_here += [(p, 0.0) for p in negation_edits(example.text)]
        for perturbation, projection in made_here:
            # What the edit claims (edits.claims): none where the label set has no opposite.
            label = edit_claim(perturbation.kind, original_label=example.label, labels=labels).label
            if label is not None:
                candidates.append(Candidate(entry, perturbation, label, projection))
    return candidates


def levered_words(leverage: Sequence[tuple[str, float]], count: int) -> set[str]:
    """The ``count`` content words of the original whose deletion moves the guide most, from
    its word leverage (label reports and span Fisher results alike), lower-cased."""
    content = [(score, word.lower()) for word, score in leverage if is_content_word(word)]
    return {word for _, word in sorted(content, key=lambda item: -item[0])[:count]}


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
        variant_text=candidate.perturbation.text,
        variant_label=candidate.label,
        rationale=rationale,
        tags=SOURCE_TAGS[candidate.source],
        source_id=f"baseline-{row}" if row else "",
        variant_answers="" if candidate.answers is None else json.dumps(candidate.answers),
        label_unverified=candidate.unverified,
    )


def verify(
    candidates: Sequence[Candidate], hosted: Sequence[Hosted], *, labels: Sequence[str]
) -> None:
    """Run every system on both texts of every candidate and set ``broken`` by the scoring
    library's break rule."""
    originals = [c.original_text for c in candidates]
    texts = sorted({c.text for c in candidates} | set(originals))
    rows: list[dict[str, Any]] = []
    for entry in hosted:
        try:
            batch = model_call(entry.system.predict, texts)
        except ValidationFailed as failure:
            raise ValidationError(f"The model of {entry.name} failed: {failure.detail}") from None
        rows += [
            {"system": entry.key, "text": text, "label": entry.mapping[label]}
            for text, label in zip(texts, batch.labels, strict=True)
        ]
    frame = pd.DataFrame(
        {
            "pair_id": range(len(candidates)),
            "team": "baseline",
            "original_id": [c.ranked.example.external_id for c in candidates],
            "original_text": originals,
            "original_label": [c.ranked.example.label for c in candidates],
            "variant_text": [c.text for c in candidates],
            "variant_label": [c.label for c in candidates],
        }
    )
    breaks = scoring.find_breaks(frame, pd.DataFrame(rows), labels=list(labels))
    names = {entry.key: entry.name for entry in hosted}
    for column, pair_id in enumerate(breaks.pairs["pair_id"]):
        candidates[int(pair_id)].broken = tuple(
            names[system] for row, system in enumerate(breaks.systems) if breaks.broken[row, column]
        )
