"""The automatic baseline breaker: a "strawman breaker" row for every shared task.

``baseline_breaker_run`` builds minimal pairs around the starter originals nearest the hosted
systems' decision boundaries (``bibi.evaluation.guidance.boundary_ranking``), checks them with
the pairs app's own minimal-pair checks and submits them through ``pairs.services`` as one
breaker team's pair set, exactly as a human breaker's set arrives. ``manage.py
baseline_breaker`` is a thin command over it, and the demo calls it directly.

How the pairs are made, for each original in rank order (nearest the boundary first):

| source | edit (``fim_engine.perturbations``, ``fim_engine.suggest_many``) | variant's gold label |
|---|---|---|
| ``synonym`` | a high-leverage word → a WordNet synonym (guided: ranked by the top eigenvector) | the original's |
| ``neighbour`` | a high-leverage word → a neighbour in a transformers guide's input embeddings | the original's |
| ``name`` | a person's name → another name | the original's |
| ``typo`` | one keyboard slip in one of the three highest-leverage words | the original's |
| ``antonym`` | a high-leverage word → a WordNet antonym that moves the guide (projection > 0) | the other label |
| ``negation`` | ``not`` after an auxiliary of a text without negation, or its one negation removed | the other label |

The *guide* of an original (the system whose λmax, eigenvector and word leverage place the
edits) is the guidance's: the ready hosted system in whose λmax distribution that original
stands highest (``guidance.guide_order`` on the ranking's ``percentile``). Label-changing
edits need "the other label", ``guidance.changed_label``: on a binary task the label the
original does not have; on a larger label set only a polarity pair (``positive``/``negative``,
``pos``/``neg``, any case) has one, so elsewhere label-changing edits are not made. A native model's
embeddings start random and, trained on a small set, their neighbours say nothing of meaning:
neighbours come from transformers guides only.

Every candidate goes through ``pairs.checks.check_pair`` with the task's rules (refused ones are
dropped and counted), then every ready hosted system predicts both of its texts, and the break
rule of the ``scoring`` library says which systems it breaks. The set prefers candidates that
break at least one system, taken in turn from each source so that the set keeps a mix of
strategies, at most ``PER_ORIGINAL`` pairs per original until every original has had its turn;
then candidates that break nothing fill it up to ``n``. Within a source, candidates that break
more systems come first, then those matching the ranking's recommended strategy for the
original, then nearer originals. Everything is deterministic: the same models, starter set and
``seed`` (which picks the typos) give the same pairs.

Each pair's rationale says how it was made, which original rank it came from and which systems
it broke when it was made; its tags are those of ``SOURCE_TAGS`` that the task's strategy list
has. Running the breaker again submits a new version of the team's set (a new pair set, which
becomes the entry unless the team marked another final, and counts against the task's quota
of sets).

This module loads models (``bibi.systems.runner``, and with it torch): the command, the demo
and workers import it, never the web process.
"""

from __future__ import annotations

from collections import Counter, defaultdict, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction

import fim_engine
import scoring
from bibi.evaluation.guidance import (
    LABEL_CHANGING,
    LABEL_PRESERVING,
    RankedOriginal,
    boundary_ranking,
    changed_label,
    guide_order,
)
from bibi.evaluation.matrix import ScoredVersion, active_versions
from bibi.pairs import services as pair_services
from bibi.pairs.checks import CheckedPair, PairInput, PairRules, StarterExample, StarterIndex
from bibi.pairs.checks import check_pair as pair_check
from bibi.pairs.models import PairSet
from bibi.sharedtasks import selectors as task_selectors
from bibi.sharedtasks import services as task_services
from bibi.sharedtasks.models import Phase, SharedTask, Team
from bibi.systems.errors import ValidationFailed
from bibi.systems.models import SystemVersion
from bibi.systems.runner import model_call, version_system
from fim_engine.perturbations import (
    ANTONYM,
    NAME,
    NEGATION,
    NEGATIONS,
    NEIGHBOUR,
    SYNONYM,
    TYPO,
    Perturbation,
    is_content_word,
    keyboard_typos,
    name_swaps,
    negation_edits,
)
from fim_engine.suggestions import SUGGESTION_SOURCES, SuggestionReport, suggest_many
from fim_engine.wordnet import WordNet, load_wordnet
from fim_engine.words import split_words

DEFAULT_PAIRS = 100
# The dedicated account that owns a team the breaker creates: it cannot log in.
BOT_USERNAME = "baseline-breaker"
# Until every original has had its turn, at most this many pairs come from one original.
PER_ORIGINAL = 3
# Round-robin order of the sources, and the order of preference of one text made twice.
SOURCES = (SYNONYM, ANTONYM, NEGATION, NEIGHBOUR, NAME, TYPO)
# Strategy tags (the 2017 OSU taxonomy the default tag list follows) a source's pair carries,
# when the task's strategy list has them.
SOURCE_TAGS = {
    SYNONYM: ("semantics",),
    ANTONYM: ("semantics",),
    NEIGHBOUR: ("semantics",),
    NAME: ("world_knowledge",),
    TYPO: ("morphosyntax",),
    NEGATION: ("morphosyntax",),
}
# Words that negate, beyond those ``negation_edits`` inserts and removes: a second negation
# makes a double negative whose label nobody can set by construction.
NEGATION_WORDS = NEGATIONS | {"neither", "nor", "nothing", "nobody", "none", "cannot", "nowhere"}
# Words whose swap for one another turns a statement around (*nothing* works / *everything*
# works): an embedding neighbour among them is no label-keeping edit.
QUANTIFIERS = frozenset(
    {
        "nothing", "everything", "something", "anything", "nobody", "everybody", "somebody",
        "anybody", "none", "all", "some", "every", "any", "always", "never", "sometimes",
        "often", "rarely", "seldom",
    }
)  # fmt: skip
# WordNet senses searched for antonyms when a neighbour is screened.
NEIGHBOUR_ANTONYM_SENSES = 8
# Guided suggestions per original: edited words, and kept label-keeping / label-changing ones.
SUGGESTED_WORDS = 3
SUGGESTED_PER_KIND = 3
TYPO_WORDS = 3


@dataclass(frozen=True)
class BaselinePair:
    """One submitted pair and how it was made. ``broken`` names the systems (``team /
    system``) it broke when it was made; ``rank`` is its original's boundary rank."""

    original_id: str
    original_label: str
    variant_text: str
    variant_label: str
    source: str
    keeps_label: bool
    rank: int
    broken: tuple[str, ...]


@dataclass(frozen=True)
class BaselineBreakerResult:
    """What a run submitted: ``submission`` is the pairs service's answer (the new set, whether
    it is the entry, the entry it replaced, warnings); ``pairs`` in the set's row order;
    ``candidates`` passed the checks, ``refused`` did not; ``systems`` are the names of the ready
    hosted systems that verified them."""

    submission: pair_services.PairSetSubmission
    team: Team
    team_created: bool
    pairs: tuple[BaselinePair, ...]
    originals: int
    candidates: int
    refused: int
    systems: tuple[str, ...]

    @property
    def pair_set(self) -> PairSet:
        return self.submission.pair_set

    @property
    def breaking(self) -> int:
        """How many pairs broke at least one system when they were made."""
        return sum(1 for pair in self.pairs if pair.broken)


@dataclass
class _Candidate:
    ranked: RankedOriginal
    perturbation: Perturbation
    label: str
    projection: float = 0.0
    checked: CheckedPair | None = None
    broken: tuple[str, ...] = ()

    @property
    def source(self) -> str:
        return self.perturbation.source

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
class _Hosted:
    version: ScoredVersion
    name: str
    system: fim_engine.System
    mapping: Mapping[str, str]

    @property
    def key(self) -> str:
        return self.version.key


def baseline_breaker_run(
    shared_task: SharedTask,
    *,
    team_name: str,
    n: int = DEFAULT_PAIRS,
    user: AbstractBaseUser | None = None,
    seed: int = 0,
    originals: Sequence[RankedOriginal] | None = None,
) -> BaselineBreakerResult:
    """Build up to ``n`` minimal pairs and submit them as ``team_name``'s new pair set.

    The team is found by name (ignoring case), or created as a breaker team owned by the
    dedicated account ``BOT_USERNAME`` (an unusable password: nobody logs in as it). The set is
    submitted by ``user`` when given (a member of the team), else by that account, which must
    then be a member of an existing team. ``originals`` is the boundary ranking to work from
    (default: ``guidance.boundary_ranking`` over the ready hosted systems). Raises
    ``ValidationError`` with a message for people: ``n`` not in 1..``max_pairs_per_set``, the
    break phase not open, the team not usable, no ready hosted system, a model that cannot be
    run, no candidate passing the checks; ``PairSetRejected`` if the pairs service refuses the
    set. Nothing is written unless the set is stored.

    Example:
        >>> result = baseline_breaker_run(shared_task, team_name="Strawman breaker", n=50)
        >>> result.pair_set.pair_count == len(result.pairs) <= 50
        True
    """
    limit = shared_task.max_pairs_per_set
    if n < 1:
        raise ValidationError(f"Ask for at least one pair (n is {n}).")
    if n > limit:
        raise ValidationError(
            f"This shared task allows at most {limit} pairs per set; ask for {limit} or fewer "
            f"(n is {n})."
        )
    task_services.phase_require_open(
        shared_task=shared_task, kind=Phase.Kind.BREAK, doing="submitting pairs"
    )
    team, submitter = _team_and_submitter(shared_task, team_name, user)
    if team is not None and submitter is not None:
        pair_services.pair_set_submit_require(team=team, user=submitter)
    hosted = _hosted_systems(shared_task)
    if originals is None:
        # The edits' words come from the guide's own leverage: the ranking's are not needed.
        originals = boundary_ranking(
            shared_task,
            system_ids=[entry.version.system_id for entry in hosted],
            with_words=False,
        )
    ranked = sorted(originals, key=lambda entry: (entry.rank, entry.example.position))[:n]
    if not ranked:
        raise ValidationError("The starter set has no originals to edit: import it first.")

    labels = tuple(shared_task.labels)
    candidates = _candidates(ranked, hosted, labels=labels, seed=seed)
    rules = PairRules.for_shared_task(shared_task)
    starter = StarterIndex(
        StarterExample(e.id, e.external_id, e.text, e.label) for e in (r.example for r in ranked)
    )
    passed: list[_Candidate] = []
    seen: set[str] = set()
    refused = 0
    for candidate in candidates:
        checked, _ = pair_check(_pair_input(candidate, row=0), starter=starter, rules=rules)
        if checked is None:
            refused += 1
        elif checked.variant_text not in seen:
            # The same text made twice (a synonym that is a neighbour too): the first stands.
            seen.add(checked.variant_text)
            candidate.checked = checked
            passed.append(candidate)
    if not passed:
        raise ValidationError(
            f"None of the {len(candidates)} candidate pairs made around {len(ranked)} originals "
            "passed this task's minimal-pair checks."
        )
    _verify(passed, hosted, labels=labels)
    chosen = _select(passed, n)
    pairs = [
        _pair_input(candidate, row=row, hosted=len(hosted))
        for row, candidate in enumerate(chosen, start=1)
    ]

    with transaction.atomic():
        created = team is None
        if team is None:
            submitter = submitter or _bot_user()
            team = task_services.team_create(
                shared_task=shared_task, owner=submitter, kind=Team.Kind.BREAKER, name=team_name
            )
        assert submitter is not None
        submission = pair_services.pair_set_submit(
            team=team, user=submitter, pairs=pairs, source=PairSet.Source.BASELINE
        )
    return BaselineBreakerResult(
        submission=submission,
        team=team,
        team_created=created,
        pairs=tuple(
            BaselinePair(
                original_id=c.ranked.example.external_id,
                original_label=c.ranked.example.label,
                variant_text=c.text,
                variant_label=c.label,
                source=c.source,
                keeps_label=c.perturbation.keeps_label,
                rank=c.ranked.rank,
                broken=c.broken,
            )
            for c in chosen
        ),
        originals=len(ranked),
        candidates=len(passed),
        refused=refused,
        systems=tuple(entry.name for entry in hosted),
    )


def _team_and_submitter(
    shared_task: SharedTask, team_name: str, user: AbstractBaseUser | None
) -> tuple[Team | None, AbstractBaseUser | None]:
    """The team (None: to be created) and who submits (None: the bot, to be created). Reads
    only, so that a refusal costs no model work and writes nothing."""
    name = team_name.strip()
    if not name:
        raise ValidationError("Give the baseline breaker's team a name.")
    bot = get_user_model().objects.filter(username=BOT_USERNAME).first()
    team = shared_task.teams.filter(name__iexact=name).first()
    if team is not None:
        if team.kind != Team.Kind.BREAKER:
            raise ValidationError(
                f"'{team.name}' is a {team.kind} team of this shared task: the baseline breaker "
                "submits pairs for a breaker team. Choose another name."
            )
        submitter = user or bot
        if submitter is None or not task_selectors.is_team_member(user=submitter, team=team):
            raise ValidationError(
                f"The team '{team.name}' exists and "
                + ("the baseline breaker's account" if user is None else f"'{user}'")
                + " is not one of its members: name a member to submit as, or choose a new "
                "team name."
            )
        return team, submitter
    joining = user or bot
    if joining is not None:
        current = task_selectors.membership_get(user=joining, shared_task=shared_task)
        if current is not None:
            who = "The baseline breaker" if user is None else f"'{user}'"
            raise ValidationError(
                f"{who} is already in the team '{current.team.name}' of this shared task, and "
                f"one account is in one team per task: run it for '{current.team.name}'."
            )
        if task_selectors.is_organizer(user=joining, shared_task=shared_task):
            raise ValidationError("Organizers of a shared task cannot join one of its teams.")
    return None, user


def _bot_user() -> AbstractBaseUser:
    bot, created = get_user_model().objects.get_or_create(username=BOT_USERNAME)
    if created:
        bot.set_unusable_password()
        bot.save(update_fields=["password"])
    return bot


def _hosted_systems(shared_task: SharedTask) -> list[_Hosted]:
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
            system = version_system(version)
        except ValidationFailed as failure:
            raise ValidationError(
                f"The model of {name} (version {entry.version_number}) could not be loaded: "
                f"{failure.detail}"
            ) from None
        hosted.append(_Hosted(entry, name, system, version.label_mapping))
    return hosted


def _guide(ranked: RankedOriginal, hosted: Sequence[_Hosted]) -> str:
    """The key of the original's guide (``guidance.guide_order`` on the ranking's
    percentiles); the first hosted system when none has the original's λmax."""
    keys = {entry.version.system_id: entry.key for entry in hosted}
    order = guide_order(
        {view.system_id: view.percentile for view in ranked.systems if view.system_id in keys}
    )
    return keys[order[0]] if order else hosted[0].key


def _candidates(
    ranked: Sequence[RankedOriginal], hosted: Sequence[_Hosted], *, labels: Sequence[str], seed: int
) -> list[_Candidate]:
    """Every edit of every original, with its gold label by construction; in a fixed order."""
    wordnet = load_wordnet()
    systems = {entry.key: entry.system for entry in hosted}
    by_guide: dict[str, list[RankedOriginal]] = defaultdict(list)
    for entry in ranked:
        by_guide[_guide(entry, hosted)].append(entry)
    reports: dict[int, SuggestionReport] = {}
    for guide, group in sorted(by_guide.items()):
        sources = SUGGESTION_SOURCES
        if systems[guide].format != "transformers":
            sources = tuple(source for source in sources if source != NEIGHBOUR)
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
            if _believable(s.edit.original, s.edit.replacement, s.source, s.projection, wordnet)
        ]
        made_here += [(p, 0.0) for p in name_swaps(example.text, wordnet=wordnet)]
        levered = _levered_words(report, TYPO_WORDS)
        made_here += [
            (p, 0.0)
            for p in keyboard_typos(example.text, per_word=1, seed=seed)
            if p.edit.original.lower() in levered
        ]
        made_here += [(p, 0.0) for p in _negation_edits(example.text)]
        other = changed_label(example.label, labels)
        for perturbation, projection in made_here:
            label = example.label if perturbation.keeps_label else other
            if label is not None:
                candidates.append(_Candidate(entry, perturbation, label, projection))
    return candidates


def _believable(
    word: str, replacement: str, source: str, projection: float, wordnet: WordNet
) -> bool:
    """Whether a guided suggestion's label by construction is believable.

    An antonym must move the guide away from its label to first order (the model reads the
    word as carrying the label). A neighbour in an embedding space is often the word's
    opposite (*boring* → *enjoyable*, *weak* → *stronger*, *nothing* → *everything*): one that
    WordNet knows as an antonym of the word (or a form of one), or a swap between quantifiers,
    is dropped.
    """
    if source == ANTONYM:
        return projection > 0
    if source != NEIGHBOUR:
        return True
    word, replacement = word.lower(), replacement.lower()
    if word in QUANTIFIERS or replacement in QUANTIFIERS:
        return False
    opposites = [
        lexical.word.lower()
        for first, second in ((word, replacement), (replacement, word))
        for lexical in wordnet.antonyms(first, senses=NEIGHBOUR_ANTONYM_SENSES)
        if second.startswith(lexical.word.lower())
    ]
    return not opposites


def _negation_edits(text: str) -> list[Perturbation]:
    """``negation_edits`` where the result is a plain negation or affirmation: ``not`` only
    into a text without any negation, a negation removed only from a text with one."""
    negations = [w for w, _, _ in split_words(text) if w in NEGATION_WORDS]
    edits = negation_edits(text)
    if not negations:
        return edits
    if len(negations) == 1:
        return [p for p in edits if p.edit.start != p.edit.end]
    return []


def _levered_words(report: SuggestionReport, count: int) -> set[str]:
    """The ``count`` content words of the original whose deletion moves the guide most."""
    content = [(score, word.lower()) for word, score in report.leverage if is_content_word(word)]
    return {word for _, word in sorted(content, key=lambda item: -item[0])[:count]}


def _pair_input(candidate: _Candidate, *, row: int, hosted: int = 0) -> PairInput:
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
    return PairInput(
        row=row,
        original_id=ranked.example.external_id,
        variant_text=candidate.perturbation.text,
        variant_label=candidate.label,
        rationale=rationale,
        tags=SOURCE_TAGS[candidate.source],
        source_id=f"baseline-{row}" if row else "",
    )


def _verify(
    candidates: Sequence[_Candidate], hosted: Sequence[_Hosted], *, labels: Sequence[str]
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


def _select(candidates: Sequence[_Candidate], n: int) -> list[_Candidate]:
    """Up to ``n`` candidates: breaking ones first, each group in turns over the sources."""
    chosen: list[_Candidate] = []
    taken: set[int] = set()
    per_original: Counter[int] = Counter()

    def order(index: int) -> tuple[Any, ...]:
        c = candidates[index]
        kind = LABEL_PRESERVING if c.perturbation.keeps_label else LABEL_CHANGING
        return (-len(c.broken), c.ranked.strategy != kind, c.ranked.rank, -c.projection, c.text)

    breaking = [i for i, c in enumerate(candidates) if c.broken]
    holding = [i for i, c in enumerate(candidates) if not c.broken]
    rounds = ((breaking, PER_ORIGINAL), (holding, PER_ORIGINAL), (breaking, None), (holding, None))
    for group, cap in rounds:
        queues = {
            source: deque(sorted((i for i in group if candidates[i].source == source), key=order))
            for source in SOURCES
        }
        while len(chosen) < n and any(queues.values()):
            for source in SOURCES:
                queue = queues[source]
                while queue and len(chosen) < n:
                    index = queue.popleft()
                    original = candidates[index].ranked.example.id
                    if index in taken or (cap is not None and per_original[original] >= cap):
                        continue
                    taken.add(index)
                    per_original[original] += 1
                    chosen.append(candidates[index])
                    break
    return chosen
