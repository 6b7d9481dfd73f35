"""The minimal-pair rules every task type shares, as pure functions over plain values.

A pair is one unaltered original from the task's starter set and a variant of it. The 2017
organizers found that "minimal" needed a concrete definition (BACKGROUND.md, "Lessons");
this module is the part of that definition that holds for every task type. Each type's
``check_pair`` (``bibi.tasktypes.<type>``) finds the original, reads what the variant claims
(a label, answer spans) and calls these rules on the texts a breaker may edit.

Texts are compared after ``bibi.texts.normalize_text`` (NFC, runs of whitespace to one space,
trimmed; the example importer finds duplicates with the same rule) and measured in tokens
(``bibi.tasktypes.tokens``). With a task's parameters (``PairRules``, read off
``SharedTask.pair_*``), an edited text is refused when:

- it is empty or longer than ``max_text_chars`` characters (default 1000);
- it has invisible characters (control or format characters: zero-width spaces, soft
  hyphens, bidirectional overrides, ...) or a word that mixes scripts (a Cyrillic "о" in
  "mоvie"): ``bibi.texts``, the rule the example importer applies to the starter set;
- it has the same tokens as the original's text (only spacing changed, or nothing);
- it shares less than ``min_shared_token_ratio`` of its tokens with the original's (default
  0.5; tokens counted with multiplicity);
- its token edit distance (insert, delete or replace one token) is more than
  ``max(max_edit_distance, max_edit_ratio x the original's token count)`` (default
  ``max(4, 35%)``).

And a pair is refused when the task requires a rationale and there is none, a rationale has
over 2000 characters or invisible characters, a strategy tag is not in the task's vocabulary
(matched ignoring case, spaces and hyphens), or the same variant appears twice in one set.

A pair that passes may still carry a *warning*: when its edit lies so far into the text that
systems, which read only the first ``SYSTEM_MAX_SEQUENCE_LENGTH`` sub-word tokens, may never
see it (``edit_out_of_sight``).

The four 2017 example pairs of BACKGROUND.md pass with the defaults; the widest is
"I love this movie!" -> "I'm mad for this movie!": distance 3 (limit 4), 4 of the variant's 7
tokens shared.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from bibi.files import RowError
from bibi.labelmaps import LabelLookup
from bibi.tasktypes.tokens import shared_token_ratio, token_edit_distance, tokenize
from bibi.texts import invisible_characters, text_problems

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
    "fixed": "the variant changes a text this task does not let breakers change",
    "answers": "the variant's answers are not spans of the variant",
    "rationale": "the rationale is missing, too long or holds characters it may not",
    "tags": "a strategy tag is not one of this task's",
    "repeated": "the same variant as an earlier row",
}


def refusals(reasons: Iterable[str], *, kind: str, setting: str = "") -> list[str]:
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
    # Which segments a breaker may change (``TaskType.editable_fields``), by field.
    editable: tuple[str, ...] = ("text",)

    @classmethod
    def for_shared_task(cls, shared_task: Any) -> PairRules:
        """The rules of ``shared_task`` (a ``SharedTask``: this module sits below its app)."""
        return cls(
            labels=tuple(shared_task.labels),
            strategy_tags=tuple(shared_task.strategy_tags),
            min_shared_token_ratio=shared_task.pair_min_shared_token_ratio,
            max_edit_distance=shared_task.pair_max_edit_distance,
            max_edit_ratio=shared_task.pair_max_edit_ratio,
            require_rationale=shared_task.pair_require_rationale,
            max_text_chars=shared_task.pair_max_text_chars,
            max_sequence_length=settings.SYSTEM_MAX_SEQUENCE_LENGTH,
            editable=shared_task.kind.editable_fields(shared_task.editable_text),
        )

    def edit_limit(self, original_token_count: int) -> float:
        """The largest token edit distance allowed from an original of this many tokens."""
        return max(self.max_edit_distance, self.max_edit_ratio * original_token_count)


@dataclass(frozen=True)
class PairInput:
    """One pair as submitted, before any check. ``row`` is what errors are reported against:
    the file's line number (the header is line 1) or the position in a JSON list (from 1).
    Either ``original_id`` or the original's texts name the original.

    ``text`` fields hold the first segment of each side; ``text_b`` fields the second of a
    sentence-pair task (premise, hypothesis); a span task gives its ``question`` (the same on
    both sides) and the variant's answers as the file gives them."""

    row: int
    variant_text: str = ""
    variant_label: str = ""
    original_id: str = ""
    original_text: str = ""
    original_label: str = ""
    rationale: str = ""
    tags: tuple[str, ...] = ()
    source_id: str = ""
    question: str = ""
    variant_answers: str = ""
    original_text_b: str = ""
    variant_text_b: str = ""
    # A machine-made edit: the claim it makes (``edits``' rule) decides whether the stored
    # pair is label unverified (``TaskType.check_pair``).
    label_unverified: bool = False


@dataclass(frozen=True)
class StarterExample:
    """A starter-set example as the checks need it: ``id`` is the database key. Fields a
    type does not use stay empty (``label`` in span tasks, ``question`` and ``answers``
    elsewhere, ``text_b`` outside sentence-pair tasks)."""

    id: int
    external_id: str
    text: str
    label: str = ""
    question: str = ""
    answers: list[dict[str, Any]] = field(default_factory=list)
    text_b: str = ""

    @classmethod
    def of(cls, example: Any) -> StarterExample:
        """From an ``Example`` (or anything with its fields): the fields it has."""
        names = [name for name in cls.__dataclass_fields__ if hasattr(example, name)]
        return cls(**{name: getattr(example, name) for name in names})


@dataclass(frozen=True)
class CheckedPair:
    """A pair that passed every check, normalized and resolved, ready to be stored.

    ``fields`` are the type's own ``Pair`` fields (a span pair's question and answers, a
    sentence pair's second texts), stored as they are."""

    row: int
    source_id: str
    original: StarterExample
    variant_text: str
    variant_label: str
    rationale: str
    tags: tuple[str, ...]
    edit_distance: int
    warnings: tuple[str, ...] = ()
    fields: Mapping[str, Any] = field(default_factory=dict)
    label_unverified: bool = False


class StarterIndex:
    """The starter set, findable by external id and by its normalized item.

    Give the examples in import order with ``key`` the normalized item of an example. In a
    labelled task the importer refuses an item already in the set with another label, so
    examples sharing an item are exact duplicates: ``by_item`` gives the first of them. An
    item with different labels (imported before that rule) is left out of ``by_item`` and
    kept, with the ids of its examples, in ``conflicting``: a pair naming that original must
    give its id.
    """

    def __init__(
        self, examples: Iterable[StarterExample], *, key: Any, labelled: bool = True
    ) -> None:
        self.by_id: dict[str, StarterExample] = {}
        self.by_item: dict[tuple[str, ...], StarterExample] = {}
        self.conflicting: dict[tuple[str, ...], list[str]] = {}
        for example in examples:
            self.by_id[example.external_id] = example
            item = key(example)
            first = self.by_item.setdefault(item, example)
            if labelled and first.label != example.label:
                self.conflicting.setdefault(item, [first.external_id])
                self.conflicting[item].append(example.external_id)
        for item in self.conflicting:
            del self.by_item[item]

    def __len__(self) -> int:
        return len(self.by_id)


def label_resolve(what: str, raw: str, labels: LabelLookup) -> tuple[str | None, str | None]:
    """The task label ``raw`` stands for, or None and why not."""
    label = labels.resolve(raw)
    if label is not None:
        return label, None
    if not raw.strip():
        return None, f"the {what} has no label"
    return None, labels.problem(raw, what=f"the {what}'s label")


@functools.cache
def _vocabulary(strategy_tags: tuple[str, ...]) -> dict[str, str]:
    return {_tag_key(tag): tag for tag in strategy_tags}


def tags_checked(tags: Sequence[str], rules: PairRules) -> tuple[tuple[str, ...], list[str]]:
    """The tags in the task's own spelling, and a refusal for each one not in its vocabulary."""
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


def variant_problems(variant: str, rules: PairRules, *, what: str = "the variant") -> list[str]:
    """An edited text on its own (normalized): present, not too long, nothing invisible."""
    if not variant:
        return refusals([f"{what} is empty"], kind="variant")
    problems: list[str] = []
    if len(variant) > rules.max_text_chars:
        problems.append(
            Refusal(
                f"{what} has {len(variant)} characters; "
                f"this task allows at most {rules.max_text_chars}",
                kind="length",
                setting="pair_max_text_chars",
            )
        )
    return problems + refusals(
        (f"{what} {problem}" for problem in text_problems(variant)), kind="variant"
    )


def free_text_problems(rationale: str, source_id: str, rules: PairRules) -> list[str]:
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
        problems += refusals(
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


def minimal_edit_problems(
    original: str, variant: str, *, rules: PairRules, what: str = "the variant"
) -> tuple[int, list[str]]:
    """Whether ``variant`` is a real and minimal edit of ``original`` (both normalized).

    Returns the token edit distance and the reasons the edit is not acceptable.
    """
    original_tokens = tokenize(original)
    variant_tokens = tokenize(variant)
    if original_tokens == variant_tokens:
        if original == variant:
            return 0, refusals([f"{what} is identical to the original"], kind="unchanged")
        return 0, refusals(
            [f"{what} has the same tokens as the original (only spacing differs)"],
            kind="unchanged",
        )
    problems: list[str] = []
    ratio = shared_token_ratio(original_tokens, variant_tokens)
    if ratio < rules.min_shared_token_ratio:
        problems.append(
            Refusal(
                f"{what} shares {ratio:.0%} of its tokens with the original; "
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
                f"{what} is {distance} token edits away from the original; at most "
                f"{int(limit)} are allowed (the larger of {rules.max_edit_distance} and "
                f"{rules.max_edit_ratio:.0%} of the original's {len(original_tokens)} tokens)",
                kind="edit_distance",
                setting="pair_max_edit_distance",
            )
        )
    return distance, problems


def row_error(row: int, problem: str) -> RowError:
    """A refusal as a row error of a file, keeping its kind and setting."""
    return RowError(
        line=row,
        reason=str(problem),
        kind=getattr(problem, "kind", ""),
        setting=getattr(problem, "setting", ""),
    )
