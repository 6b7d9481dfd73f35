"""The minimal-pair rules: what a submitted pair must be, as pure functions.

A pair is one unaltered original from the task's starter set and a variant of it, with the
variant's gold label. The 2017 organizers found that "minimal" needed a concrete definition
(BACKGROUND.md, "Lessons"); this module is that definition. Everything here works on plain
values, so the rules can be read, tested and explained without a database.

Texts are compared after ``bibi.texts.normalize_text`` (NFC, runs of whitespace to one space,
trimmed; the example importer finds duplicates with the same rule)
and measured in tokens (``bibi.pairs.tokens``). With a task's parameters (``PairRules``, read off
``SharedTask.pair_*``), a pair is refused when:

- the original is not in the starter set (looked up by id, or by its text when no id is
  given); a given original text must equal the example's, a given original label its label;
- the variant is empty or longer than ``max_text_chars`` characters (default 1000);
- the variant or a given original text has invisible characters (control or format
  characters: zero-width spaces, soft hyphens, bidirectional overrides, ...) or a word that
  mixes scripts (a Cyrillic "о" in "mоvie"): ``bibi.texts``, the rule the example importer
  applies to the starter set; a rationale or a pair id with invisible characters;
- the variant has the same tokens as the original (only spacing changed, or nothing);
- the variant shares less than ``min_shared_token_ratio`` of its tokens with the original
  (default 0.5; tokens counted with multiplicity);
- the token edit distance (insert, delete or replace one token) is more than
  ``max(max_edit_distance, max_edit_ratio x the original's token count)`` (default
  ``max(4, 35%)``);
- the variant's label, after the optional label map, is not in the task's label set;
- the task requires a rationale and there is none; a rationale over 2000 characters;
- a strategy tag is not in the task's vocabulary (matched ignoring case, spaces and hyphens);
- the same variant text appears twice in one set.

A pair that passes may still carry a *warning*: when its edit lies so far into the text
that systems, which read only the first ``SYSTEM_MAX_SEQUENCE_LENGTH`` sub-word tokens,
may never see it (``edit_out_of_sight``).

The four 2017 example pairs of BACKGROUND.md pass with the defaults; the widest is
"I love this movie!" -> "I'm mad for this movie!": distance 3 (limit 4), 4 of the
variant's 7 tokens shared. A machine-made pair is stored *label unverified* only if it states a
label other than the original's (``edits.claims.pair_unverified``, as the span checks ask).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.conf import settings

from bibi.files import RowError
from bibi.labelmaps import LabelLookup
from bibi.pairs.tokens import edit_out_of_sight, shared_token_ratio, token_edit_distance, tokenize
from bibi.texts import invisible_characters, normalize_text, text_problems
from edits.claims import pair_unverified

if TYPE_CHECKING:
    from bibi.sharedtasks.models import SharedTask

RATIONALE_MAX_CHARS = 2000


class Refusal(str):
    """Why a pair is refused, in words, naming the rule that refused it (``kind``) and the
    shared-task setting that rule reads (``setting``, empty for rules no setting changes).

    It is the message itself (a ``str``), so it reads and compares as one.
    """

    kind: str
    setting: str

    def __new__(cls, reason: str, *, kind: str, setting: str = "") -> Refusal:
        refusal = super().__new__(cls, reason)
        refusal.kind = kind
        refusal.setting = setting
        return refusal


# What the pairs each rule refuses have in common, for a refusal's summary by kind.
KIND_SUMMARIES = {
    "original": "the original is not (or not exactly) a sentence of the starter set",
    "label": "a label is not one of this task's labels (a label map can translate the file's)",
    "unchanged": "the variant does not change the original's words",
    "shared_tokens": "the variant shares too few of its tokens with the original",
    "edit_distance": "the variant is more token edits away from the original than allowed",
    "length": "the variant is longer than this task allows",
    "variant": "the variant is empty or holds characters it may not",
    "rationale": "the rationale is missing, too long or holds characters it may not",
    "tags": "a strategy tag is not one of this task's",
    "repeated": "the same variant as an earlier row",
}


def _refusals(reasons: Iterable[str], *, kind: str, setting: str = "") -> list[str]:
    return [Refusal(reason, kind=kind, setting=setting) for reason in reasons]


_TAG_SEPARATORS = re.compile(r"[\s\-]+")


def _tag_key(tag: str) -> str:
    return _TAG_SEPARATORS.sub("_", tag.strip().lower())


@dataclass(frozen=True)
class PairRules:
    """A shared task's minimal-pair parameters (the ``SharedTask.pair_*`` fields)."""

    labels: tuple[str, ...]
    strategy_tags: tuple[str, ...]
    min_shared_token_ratio: float = 0.5
    max_edit_distance: int = 4
    max_edit_ratio: float = 0.35
    require_rationale: bool = False
    max_text_chars: int = 1000
    # Sub-word tokens a system reads per text (None: no warning about edits out of sight).
    max_sequence_length: int | None = None

    @classmethod
    def for_shared_task(cls, shared_task: SharedTask) -> PairRules:
        return cls(
            labels=tuple(shared_task.labels),
            strategy_tags=tuple(shared_task.strategy_tags),
            min_shared_token_ratio=shared_task.pair_min_shared_token_ratio,
            max_edit_distance=shared_task.pair_max_edit_distance,
            max_edit_ratio=shared_task.pair_max_edit_ratio,
            require_rationale=shared_task.pair_require_rationale,
            max_text_chars=shared_task.pair_max_text_chars,
            max_sequence_length=settings.SYSTEM_MAX_SEQUENCE_LENGTH,
        )

    def edit_limit(self, original_token_count: int) -> float:
        """The largest token edit distance allowed from an original of this many tokens."""
        return max(self.max_edit_distance, self.max_edit_ratio * original_token_count)


@dataclass(frozen=True)
class PairInput:
    """One pair as submitted, before any check. ``row`` is what errors are reported against:
    the file's line number (the header is line 1) or the position in a JSON list (from 1).
    Either ``original_id`` or ``original_text`` names the original."""

    row: int
    variant_text: str
    variant_label: str
    original_id: str = ""
    original_text: str = ""
    original_label: str = ""
    rationale: str = ""
    tags: tuple[str, ...] = ()
    source_id: str = ""
    # Span tasks (``span_checks``): the question (optional: the original's) and the variant's
    # answers as the file gives them (``bibi.sharedtasks.spans.answers_read``).
    question: str = ""
    variant_answers: str = ""
    # A machine-made pair (the baseline breaker, a suggestion taken as offered in the pair
    # editor): stored as ``Pair.label_unverified`` if it claims a change (``edits.claims``).
    label_unverified: bool = False


@dataclass(frozen=True)
class StarterExample:
    """A starter-set example as the checks need it: ``id`` is the database key."""

    id: int
    external_id: str
    text: str
    label: str


class StarterIndex:
    """The starter set, findable by external id and by normalized text.

    Give the examples in import order. The importer refuses a text already in the set with
    another label, so examples sharing a text are exact duplicates: ``by_text`` gives the
    first of them, which has the same text and label as the others. A text with different
    labels (imported before that rule) is left out of ``by_text`` and kept, with the ids of
    its examples, in ``conflicting``: a pair naming that original must give its id.
    """

    def __init__(self, examples: Iterable[StarterExample]) -> None:
        self.by_id: dict[str, StarterExample] = {}
        self.by_text: dict[str, StarterExample] = {}
        self.conflicting: dict[str, list[str]] = {}
        for example in examples:
            normalized = StarterExample(
                id=example.id,
                external_id=example.external_id,
                text=normalize_text(example.text),
                label=example.label,
            )
            self.by_id[example.external_id] = normalized
            first = self.by_text.setdefault(normalized.text, normalized)
            if first.label != normalized.label:
                self.conflicting.setdefault(normalized.text, [first.external_id])
                self.conflicting[normalized.text].append(normalized.external_id)
        for text in self.conflicting:
            del self.by_text[text]

    def __len__(self) -> int:
        return len(self.by_id)


@dataclass(frozen=True)
class CheckedPair:
    """A pair that passed every check, normalized and resolved, ready to be stored."""

    row: int
    source_id: str
    original: StarterExample
    variant_text: str
    variant_label: str
    rationale: str
    tags: tuple[str, ...]
    edit_distance: int
    warnings: tuple[str, ...] = ()
    # Span tasks: the Pair fields question, original_answers and variant_answers.
    span: dict[str, Any] | None = None
    label_unverified: bool = False


def _label(what: str, raw: str, labels: LabelLookup) -> tuple[str | None, str | None]:
    """The task label ``raw`` stands for, or None and why not."""
    label = labels.resolve(raw)
    if label is not None:
        return label, None
    if not raw.strip():
        return None, f"the {what} has no label"
    return None, labels.problem(raw, what=f"the {what}'s label")


def _not_original(reason: str) -> tuple[None, list[str]]:
    return None, [Refusal(reason, kind="original")]


def _resolve_original(
    pair: PairInput,
    starter: StarterIndex,
    rules: PairRules,
    labels: LabelLookup,
) -> tuple[StarterExample | None, list[str]]:
    original_id = pair.original_id.strip()
    given_text = normalize_text(pair.original_text)
    # Said first: "not a sentence of the starter set" would hide that it only looks like one.
    text_wrong = _refusals(
        (f"the original text {problem}" for problem in text_problems(given_text)),
        kind="original",
    )
    if text_wrong:
        return None, text_wrong
    if original_id:
        original = starter.by_id.get(original_id)
        if original is None:
            return _not_original(f"the original id '{original_id[:200]}' is not in the starter set")
        if given_text and given_text != original.text:
            return _not_original(
                f"the original text does not match starter example '{original_id}': "
                f"it is {original.text!r}"
            )
    elif given_text:
        original = starter.by_text.get(given_text)
        if given_text in starter.conflicting:
            ids = ", ".join(f"'{i}'" for i in starter.conflicting[given_text])
            return _not_original(
                f"the original text is in the starter set with different labels ({ids}): "
                "give the original's id"
            )
        if original is None:
            return _not_original("the original text is not a sentence of the starter set")
    else:
        return _not_original("the pair names no original: give its starter-set id (or its text)")
    if pair.original_label.strip():
        given_label, problem = _label("original", pair.original_label, labels)
        if problem:
            return None, _refusals([problem], kind="label", setting="labels")
        if given_label != original.label:
            return _not_original(
                f"the original's label is '{original.label}' in the starter set, "
                f"not {labels.described(pair.original_label)}"
            )
    return original, []


@functools.cache
def _vocabulary(strategy_tags: tuple[str, ...]) -> dict[str, str]:
    return {_tag_key(tag): tag for tag in strategy_tags}


def _tags(tags: Sequence[str], rules: PairRules) -> tuple[tuple[str, ...], list[str]]:
    vocabulary = _vocabulary(rules.strategy_tags)
    chosen: list[str] = []
    problems: list[str] = []
    for tag in tags:
        if not tag.strip():
            continue
        canonical = vocabulary.get(_tag_key(tag))
        if canonical is None:
            problems.append(
                Refusal(
                    f"the tag '{tag.strip()[:100]}' is not one of {', '.join(rules.strategy_tags)}",
                    kind="tags",
                    setting="strategy_tags",
                )
            )
        elif canonical not in chosen:
            chosen.append(canonical)
    return tuple(chosen), problems


def _variant_problems(variant: str, rules: PairRules) -> list[str]:
    """The variant on its own (normalized): present, not too long, nothing invisible."""
    if not variant:
        return _refusals(["the variant is empty"], kind="variant")
    problems: list[str] = []
    if len(variant) > rules.max_text_chars:
        problems.append(
            Refusal(
                f"the variant has {len(variant)} characters; "
                f"this task allows at most {rules.max_text_chars}",
                kind="length",
                setting="pair_max_text_chars",
            )
        )
    return problems + _refusals(
        (f"the variant {problem}" for problem in text_problems(variant)), kind="variant"
    )


def _free_text_problems(rationale: str, source_id: str, rules: PairRules) -> list[str]:
    """The rationale (stripped) and the pair's own id."""
    problems: list[str] = []
    if rules.require_rationale and not rationale:
        problems.append(
            Refusal(
                "this task requires a rationale for every pair",
                kind="rationale",
                setting="pair_require_rationale",
            )
        )
    if len(rationale) > RATIONALE_MAX_CHARS:
        problems.append(
            Refusal(
                f"the rationale has {len(rationale)} characters; at most {RATIONALE_MAX_CHARS}",
                kind="rationale",
            )
        )
    else:
        problems += _refusals(
            (f"the rationale {p}" for p in text_problems(rationale, words=False)),
            kind="rationale",
        )
    if len(source_id) > 200 or invisible_characters(source_id):
        problems.append(
            Refusal(
                "the pair's id is longer than 200 characters or has invisible characters",
                kind="pair_id",
            )
        )
    return problems


def check_pair(
    pair: PairInput,
    *,
    starter: StarterIndex,
    rules: PairRules,
    labels: LabelLookup | None = None,
) -> tuple[CheckedPair | None, list[str]]:
    """Check one pair on its own. Returns the checked pair, or None and every reason why not.

    ``labels`` reads the pair's labels (a label map); by default only the task's own labels.
    """
    labels = labels or LabelLookup.build(None, labels=rules.labels)
    problems: list[str] = []
    original, original_problems = _resolve_original(pair, starter, rules, labels)
    problems += original_problems
    variant = normalize_text(pair.variant_text)
    problems += _variant_problems(variant, rules)
    label, label_problem = _label("variant", pair.variant_label, labels)
    if label_problem:
        problems.append(Refusal(label_problem, kind="label", setting="labels"))
    rationale = pair.rationale.strip()
    problems += _free_text_problems(rationale, pair.source_id, rules)
    tags, tag_problems = _tags(pair.tags, rules)
    problems += tag_problems

    distance = 0
    if original is not None and variant:
        distance, edit_problems = minimal_edit_problems(original.text, variant, rules=rules)
        problems += edit_problems

    if problems or original is None or label is None:
        return None, problems
    out_of_sight = edit_out_of_sight(
        original.text, variant, max_sequence_length=rules.max_sequence_length
    )
    return (
        CheckedPair(
            row=pair.row,
            source_id=pair.source_id.strip(),
            original=original,
            variant_text=variant,
            variant_label=label,
            rationale=rationale,
            tags=tags,
            edit_distance=distance,
            warnings=(out_of_sight,) if out_of_sight else (),
            label_unverified=pair_unverified(
                machine_made=pair.label_unverified, original=original.label, variant=label
            ),
        ),
        [],
    )


def minimal_edit_problems(
    original: str, variant: str, *, rules: PairRules
) -> tuple[int, list[str]]:
    """Whether ``variant`` is a real and minimal edit of ``original`` (both normalized).

    Returns the token edit distance and the reasons the edit is not acceptable.
    """
    original_tokens = tokenize(original)
    variant_tokens = tokenize(variant)
    if original_tokens == variant_tokens:
        if original == variant:
            return 0, _refusals(["the variant is identical to the original"], kind="unchanged")
        return 0, _refusals(
            ["the variant has the same tokens as the original (only spacing differs)"],
            kind="unchanged",
        )
    problems: list[str] = []
    ratio = shared_token_ratio(original_tokens, variant_tokens)
    if ratio < rules.min_shared_token_ratio:
        problems.append(
            Refusal(
                f"the variant shares {ratio:.0%} of its tokens with the original; "
                f"at least {rules.min_shared_token_ratio:.0%} must be shared",
                kind="shared_tokens",
                setting="pair_min_shared_token_ratio",
            )
        )
    distance = token_edit_distance(original_tokens, variant_tokens)
    limit = rules.edit_limit(len(original_tokens))
    if distance > limit:
        problems.append(
            Refusal(
                f"the variant is {distance} token edits away from the original; at most "
                f"{int(limit)} are allowed (the larger of {rules.max_edit_distance} and "
                f"{rules.max_edit_ratio:.0%} of the original's {len(original_tokens)} tokens)",
                kind="edit_distance",
                setting="pair_max_edit_distance",
            )
        )
    return distance, problems


def _row_error(row: int, problem: str) -> RowError:
    return RowError(
        line=row,
        reason=str(problem),
        kind=getattr(problem, "kind", ""),
        setting=getattr(problem, "setting", ""),
    )


def check_pairs(
    pairs: Sequence[PairInput],
    *,
    starter: StarterIndex,
    rules: PairRules,
    label_map: Mapping[str, str] | None = None,
    taken_variants: Mapping[str, int] | None = None,
) -> tuple[list[CheckedPair], list[RowError]]:
    """Check a whole set: each pair on its own, then no variant twice.

    ``label_map`` translates the set's labels (``bibi.labelmaps``); a map whose target is not
    a task label raises ``ValidationError``. ``taken_variants`` maps the normalized variants already in the set (when pairs are
    added to a draft one by one) to their rows. Returns the checked pairs and, in row
    order, every problem found; the set may be stored only when the second list is empty.
    """
    labels = LabelLookup.build(label_map, labels=rules.labels)
    checked: list[CheckedPair] = []
    errors: list[RowError] = []
    seen: dict[str, int] = dict(taken_variants or {})
    for pair in pairs:
        result, problems = check_pair(pair, starter=starter, rules=rules, labels=labels)
        variant = result.variant_text if result else normalize_text(pair.variant_text)
        if variant and variant in seen:
            problems.append(Refusal(f"the same variant as row {seen[variant]}", kind="repeated"))
        elif variant:
            seen[variant] = pair.row
        if problems:
            errors.extend(_row_error(pair.row, problem) for problem in problems)
        elif result is not None:
            checked.append(result)
    errors.sort(key=lambda error: error.line)
    return checked, errors
