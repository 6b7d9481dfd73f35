"""The automatic baseline breaker: a "strawman breaker" row for every shared task.

``baseline_breaker_run`` builds minimal pairs around the starter originals nearest the hosted
systems' decision boundaries (``bibi.guidance.ranking.boundary_ranking``), checks them with
the pairs app's own minimal-pair checks and submits them through ``pairs.services`` as one
breaker team's pair set, exactly as a human breaker's set arrives. ``manage.py
baseline_breaker`` is a thin command over it, and the demo calls it directly.

How the pairs are made, for each original in rank order (nearest the boundary first):

| source | edit (``edits.perturbations``, ``fim_engine.suggest_many``) | variant's gold label |
|---|---|---|
| ``synonym`` | a high-leverage word → a WordNet synonym through the fluency gate (guided: ranked by the top eigenvector) | the original's |
| ``name`` | a person's name → another name | the original's |
| ``typo`` | one keyboard slip in one of the three highest-leverage words | the original's |
| ``antonym`` | a high-leverage adjective → its direct WordNet antonym (first sense, one-clause text) that moves the guide (projection > 0) | the other label, **unverified** |
| ``negation`` | ``not`` after the copula or auxiliary heading a one-clause text, or its one negation removed | the other label, **unverified** |

The fluency gate, the clause rule and the first-sense rule are ``edits.fluency``'s and
``edits.perturbations``'s. Embedding neighbours are not used: a neighbour is as often
the word's opposite as a synonym, so it claims no label (``fim_engine.suggest`` shows them as
probes of the model). Label-changing pairs are stored with ``Pair.label_unverified``: their new
label is the edit's intent, which nobody checked; they reach the scores only through
validation, and with validation off scoring leaves them out of the breaker's scored set (the
rationale of each says so).

The *guide* of an original (the system whose λmax, eigenvector and word leverage place the
edits) is the guidance's: the ready hosted system in whose λmax distribution that original
stands highest (``guidance.guide_order`` on the ranking's ``percentile``). What each edit
claims is ``edits.claims``' one rule (``edit_claim``): label-changing edits need "the other
label", ``edits.claims.changed_label``: on a binary task the label the
original does not have; on a larger label set only a polarity pair (``positive``/``negative``,
``pos``/``neg``, any case) has one, so elsewhere label-changing edits are not made.

Every candidate goes through ``pairs.checks.check_pair`` with the task's rules (refused ones are
dropped and counted), then every ready hosted system predicts both of its texts, and the break
rule of the ``scoring`` library says which systems it breaks. The set prefers candidates that
break at least one system, taken in turn from each source so that the set keeps a mix of
strategies, at most ``PER_ORIGINAL`` pairs per original until every original has had its turn;
then candidates that break nothing fill it up to ``n``. Typos are chosen the same way after
the fluent edits, and are at most ``MAX_TYPO_SHARE`` (10%) of the set: a slip is a fair attack
but no fluent sentence, and a set of slips would say little; the set is smaller when the
fluent sources run out. Edits are made around the
``ORIGINALS_PER_PAIR * n`` originals nearest the boundary. Within a source, candidates that break
more systems come first, then those matching the ranking's recommended strategy for the
original, then nearer originals. Everything is deterministic: the same models, starter set and
``seed`` (which picks the typos) give the same pairs.

Each pair's rationale says how it was made, which original rank it came from and which systems
it broke when it was made; its tags are those of ``SOURCE_TAGS`` that the task's strategy list
has. Running the breaker again submits a new version of the team's set (a new pair set, which
becomes the entry unless the team marked another final, and counts against the task's quota
of sets).

On a sentence-pair task (NLI) the label path runs on the pairs: each candidate edits one of
the texts the task lets breakers edit (``editable_text``), the others stay the original's, and
the systems run on whole pairs; on a three-label set a label change claims no label
(``edits.claims``), so only label-keeping pairs are made there.

On a span task (QA-SRL) the candidates are ``span_candidates``' (edits of the sentence
outside the gold answers keep them; edits inside one carry a guessed answer and are stored
``label_unverified``; never the predicate), verified as they are made, and the checks are
``pairs.span_checks``'; the rest is the same.

This module loads models (``bibi.systems.runner``, and with it torch): the command, the demo
and workers import it, never the web process.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction

from bibi.baseline.candidates import (
    SOURCES,
    Candidate,
    Hosted,
    candidates_make,
    hosted_systems,
    pair_input,
    verify,
)
from bibi.baseline.span_candidates import span_candidates_make
from bibi.guidance.ranking import (
    LABEL_CHANGING,
    LABEL_PRESERVING,
    RankedOriginal,
    boundary_ranking,
)
from bibi.pairs import services as pair_services
from bibi.pairs.models import PairSet
from bibi.sharedtasks import selectors as task_selectors
from bibi.sharedtasks import services as task_services
from bibi.sharedtasks.models import Phase, SharedTask, Team
from bibi.tasktypes import LABEL, SPAN, Parts
from bibi.tasktypes.rules import CheckedPair, PairInput, PairRules, StarterExample

DEFAULT_PAIRS = 100
# The dedicated account that owns a team the breaker creates: it cannot log in.
BOT_USERNAME = "baseline-breaker"
# Until every original has had its turn, at most this many pairs come from one original.
PER_ORIGINAL = 3
# A keyboard slip is a fair attack but no fluent sentence: typos are at most this share of a
# set, so that the set stays mostly fluent (a smaller set rather than one of slips).
MAX_TYPO_SHARE = 0.10
TYPO = "typo"
# The originals edits are made around: the nearest the boundary, this many per pair asked for
# (strict gates leave many originals without a fluent edit).
ORIGINALS_PER_PAIR = 3


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
    label_unverified: bool = False
    # Items of two texts (a sentence pair): the variant's second text (the hypothesis).
    variant_text_b: str = ""
    # Span tasks: the variant's answers (a guess when ``label_unverified``).
    variant_answers: tuple[dict[str, Any], ...] = ()


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

    @property
    def unverified(self) -> int:
        """How many pairs change the label by construction (stored ``label_unverified``)."""
        return sum(1 for pair in self.pairs if pair.label_unverified)


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
    _check_count(shared_task, n)
    task_services.phase_require_open(
        shared_task=shared_task, kind=Phase.Kind.BREAK, doing="submitting pairs"
    )
    team, submitter = _team_and_submitter(shared_task, team_name, user)
    if team is not None and submitter is not None:
        pair_services.pair_set_submit_require(team=team, user=submitter)
    hosted = hosted_systems(shared_task)
    ranked = _originals(shared_task, hosted, originals, n)
    passed, refused = BASELINE_KINDS.of(shared_task.kind).made(shared_task, ranked, hosted, seed)
    chosen = _select(passed, n)
    pairs = [
        pair_input(candidate, row=row, hosted=len(hosted))
        for row, candidate in enumerate(chosen, start=1)
    ]
    submission, team, created = _submit(shared_task, team, team_name, submitter, pairs)
    return BaselineBreakerResult(
        submission=submission,
        team=team,
        team_created=created,
        pairs=tuple(_made(candidate) for candidate in chosen),
        originals=len(ranked),
        candidates=len(passed),
        refused=refused,
        systems=tuple(entry.name for entry in hosted),
    )


def _submit(
    shared_task: SharedTask,
    team: Team | None,
    team_name: str,
    submitter: AbstractBaseUser | None,
    pairs: list[PairInput],
) -> tuple[pair_services.PairSetSubmission, Team, bool]:
    """The set submitted as the team's (created first when it is new), in one transaction."""
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
    return submission, team, created


def _check_count(shared_task: SharedTask, n: int) -> None:
    limit = shared_task.max_pairs_per_set
    if n < 1:
        raise ValidationError(f"Ask for at least one pair (n is {n}).")
    if n > limit:
        raise ValidationError(
            f"This shared task allows at most {limit} pairs per set; ask for {limit} or fewer "
            f"(n is {n})."
        )


def _originals(
    shared_task: SharedTask,
    hosted: Sequence[Hosted],
    originals: Sequence[RankedOriginal] | None,
    n: int,
) -> list[RankedOriginal]:
    """The ``ORIGINALS_PER_PAIR * n`` originals nearest the boundary (``originals``, default
    the ranking)."""
    if originals is None:
        # The edits' words come from the guide's own leverage: the ranking's are not needed.
        originals = boundary_ranking(
            shared_task,
            system_ids=[entry.version.system_id for entry in hosted],
            with_words=False,
        )
    ranked = sorted(originals, key=lambda entry: (entry.rank, entry.example.position))
    ranked = ranked[: ORIGINALS_PER_PAIR * n]
    if not ranked:
        raise ValidationError("The starter set has no originals to edit: import it first.")
    return ranked


@dataclass(frozen=True)
class BaselineKind:
    """What the baseline breaker does by what a task's systems answer: make the candidates
    that pass the task's checks, verified on every hosted system (``made``: the passed and
    the count refused), and what its unverified pairs claim (``unverified``)."""

    made: Callable[
        [SharedTask, Sequence[RankedOriginal], Sequence[Hosted], int],
        tuple[list[Candidate], int],
    ]
    unverified: str


def _label_made(
    shared_task: SharedTask, ranked: Sequence[RankedOriginal], hosted: Sequence[Hosted], seed: int
) -> tuple[list[Candidate], int]:
    candidates = candidates_make(ranked, hosted, shared_task=shared_task, seed=seed)
    passed, refused = _checked(shared_task, ranked, candidates)
    verify(passed, hosted, kind=shared_task.kind, labels=shared_task.labels)
    return passed, refused


def _span_made(
    shared_task: SharedTask, ranked: Sequence[RankedOriginal], hosted: Sequence[Hosted], seed: int
) -> tuple[list[Candidate], int]:
    # Verified as they are made, by every system's forward pass.
    candidates = span_candidates_make(ranked, hosted, shared_task=shared_task, seed=seed)
    return _checked(shared_task, ranked, candidates)


def _checked(
    shared_task: SharedTask, ranked: Sequence[RankedOriginal], candidates: Sequence[Candidate]
) -> tuple[list[Candidate], int]:
    """The candidates that pass the task's minimal-pair checks (each text once), and how many
    were refused."""
    rules = PairRules.for_shared_task(shared_task)
    kind = shared_task.kind
    starter = kind.starter_index(StarterExample.of(r.example) for r in ranked)
    check: Callable[[PairInput], tuple[CheckedPair | None, list[str]]]
    check = partial(kind.check_pair, starter=starter, rules=rules)
    passed: list[Candidate] = []
    # A variant is one pair per item, as the checks count it.
    seen: set[Any] = set()
    refused = 0
    for candidate in candidates:
        pair = pair_input(candidate, row=0)
        checked, _ = check(pair)
        if checked is None:
            refused += 1
        elif (key := kind.variant_key(pair, checked)) not in seen:
            # The same text made twice (a synonym that is a neighbour too): the first stands.
            seen.add(key)
            candidate.checked = checked
            candidate.items = kind.checked_items(checked)
            passed.append(candidate)
    if not passed:
        raise ValidationError(
            f"None of the {len(candidates)} candidate pairs made around {len(ranked)} originals "
            "passed this task's minimal-pair checks."
        )
    return passed, refused


BASELINE_KINDS: Parts[BaselineKind] = Parts("baseline breaker")
BASELINE_KINDS.register(
    LABEL, BaselineKind(made=_label_made, unverified="change the label (antonyms, negation)")
)
BASELINE_KINDS.register(
    SPAN,
    BaselineKind(
        made=_span_made,
        unverified="carry a guessed answer (an edit inside a gold answer)",
    ),
)


def _made(candidate: Candidate) -> BaselinePair:
    return BaselinePair(
        original_id=candidate.ranked.example.external_id,
        original_label=candidate.ranked.example.label,
        variant_text=candidate.text,
        variant_text_b=candidate.text_b,
        variant_label=candidate.label,
        source=candidate.source,
        keeps_label=candidate.perturbation.keeps_label,
        rank=candidate.ranked.rank,
        broken=candidate.broken,
        label_unverified=candidate.unverified,
        variant_answers=tuple(candidate.answers or ()),
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


def _select(candidates: Sequence[Candidate], n: int) -> list[Candidate]:
    """Up to ``n`` candidates: breaking ones first, each group in turns over the sources;
    typos at most ``MAX_TYPO_SHARE`` of the set, after the fluent edits."""
    fluent = [i for i, c in enumerate(candidates) if c.source != TYPO]
    typos = [i for i, c in enumerate(candidates) if c.source == TYPO]
    per_original: Counter[int] = Counter()
    chosen = _in_turns(candidates, fluent, n, per_original)
    # t typos beside f fluent pairs are at most the share s of the set: t <= s (f + t).
    share = MAX_TYPO_SHARE * len(chosen) / (1 - MAX_TYPO_SHARE)
    room = min(int(MAX_TYPO_SHARE * n + 1e-9), int(share + 1e-9))
    chosen = chosen[: n - room] + _in_turns(candidates, typos, room, per_original)
    # The set's rows: pairs that break a system first, as within each part.
    return sorted(chosen, key=lambda candidate: not candidate.broken)


def _in_turns(
    candidates: Sequence[Candidate], indices: Sequence[int], n: int, per_original: Counter[int]
) -> list[Candidate]:
    """Up to ``n`` of ``candidates[indices]``: breaking ones first, each group in turns over
    the sources, at most ``PER_ORIGINAL`` an original (``per_original`` counts them) until
    every original has had its turn."""
    chosen: list[Candidate] = []
    taken: set[int] = set()

    def order(index: int) -> tuple[Any, ...]:
        c = candidates[index]
        kind = LABEL_CHANGING if c.unverified else LABEL_PRESERVING
        # Pairs that share their first text (a sentence pair's premise) stay in made order.
        return (-len(c.broken), c.ranked.strategy != kind, c.ranked.rank, -c.projection, c.text)

    breaking = [i for i in indices if candidates[i].broken]
    holding = [i for i in indices if not candidates[i].broken]
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
