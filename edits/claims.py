"""What a machine-made edit claims about its label: the one rule every caller asks.

An edit made by a machine (a perturbation generator, a suggestion, the baseline breaker) is of
one of three **kinds**:

| kind | what it claims | its gold label | ``label_unverified`` |
|---|---|---|---|
| ``keeps`` | the variant means what the original meant | the original's | no |
| ``changes`` | the variant means something else | :func:`changed_label` (None: unknown) | yes |
| ``probe`` | nothing: it shows what moves a model | none | no |

A ``changes`` edit's new label is the machine's guess: nobody has checked it, so a pair made
from one is stored *label unverified* and counts only once validators confirm it. On a span
task (no label set) ``changes`` is an edit that moves the answer: its answers are the guess.

The kind of an edit comes from its source and intent (:func:`edit_kind`: an embedding
neighbour, or any edit marked ``probe``, is a probe; otherwise ``keeps_label`` decides), or,
for a pair whose label or answers someone stated, from whether they are the original's
(:func:`stated_kind`). :func:`edit_claim` turns a kind into the :class:`Claim`;
:func:`pair_unverified` says whether a pair is stored *label unverified* (both pair checks,
the label and the span one, ask it).

This module imports nothing beyond the standard library (the web process reads it).

Example:
    >>> edit_claim(edit_kind(source=ANTONYM, keeps_label=False), original_label="positive",
    ...            labels=["negative", "positive"])
    Claim(kind='changes', label='negative')
    >>> edit_claim(PROBE, original_label="positive", labels=["negative", "positive"]).label is None
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

KEEPS, CHANGES, PROBE = "keeps", "changes", "probe"
# In the order suggestions are listed: label-keeping, label-changing, then probes.
KINDS = (KEEPS, CHANGES, PROBE)

# The sources of machine-made edits (edits.perturbations and fim_engine.suggestions make them).
SYNONYM, ANTONYM, NEIGHBOUR, NAME, TYPO, NEGATION = (
    "synonym",
    "antonym",
    "neighbour",
    "name",
    "typo",
    "negation",
)
# Whether an edit of each source is meant to keep the label, by construction (its intent).
KEEPS_LABEL = {
    SYNONYM: True,
    ANTONYM: False,
    NEIGHBOUR: True,
    NAME: True,
    TYPO: True,
    NEGATION: False,
}
# Sources whose edits claim no label whatever their intent: a neighbour in a model's embedding
# space is as often the word's opposite or an odd word as a synonym.
PROBE_SOURCES = frozenset({NEIGHBOUR})
# Labels with an obvious opposite on a label set larger than two (:func:`changed_label`).
POLARITY = {"positive": "negative", "negative": "positive", "pos": "neg", "neg": "pos"}


@dataclass(frozen=True)
class Claim:
    """What one edit claims: its ``kind`` and the gold ``label`` it claims for the variant
    (None for a probe, and for a label change whose new label the label set does not tell)."""

    kind: str
    label: str | None

    @property
    def label_unverified(self) -> bool:
        """A label change (or a moved answer) that nobody has checked."""
        return self.kind == CHANGES

    @property
    def probe(self) -> bool:
        """Claims nothing about the label: never offered or stored as a pair's label."""
        return self.kind == PROBE


def edit_kind(*, keeps_label: bool, probe: bool = False, source: str = "") -> str:
    """The kind of a machine-made edit: ``probe`` when it is marked one or its ``source`` is a
    probe source (``PROBE_SOURCES``), else ``keeps`` or ``changes`` as ``keeps_label`` says.

    >>> edit_kind(source=NEIGHBOUR, keeps_label=True), edit_kind(keeps_label=False)
    ('probe', 'changes')
    """
    if probe or source in PROBE_SOURCES:
        return PROBE
    return KEEPS if keeps_label else CHANGES


def stated_kind(original: object, variant: object) -> str:
    """The kind of a pair whose variant's label (or answer texts) someone stated: ``keeps``
    when it is the original's, else ``changes``.

    >>> stated_kind("positive", "positive"), stated_kind(("UCD",), ("the UCD team",))
    ('keeps', 'changes')
    """
    return KEEPS if variant == original else CHANGES


def pair_unverified(*, machine_made: bool, original: object, variant: object) -> bool:
    """Whether a pair is stored *label unverified*: a machine made it and it states a label (or
    answer texts, on a span task) other than the original's, a change nobody has checked. A
    machine-made pair that states the original's claims no change: its label is the one a
    person gave the original, whoever made the text.

    >>> pair_unverified(machine_made=True, original="pos", variant="neg")
    True
    >>> pair_unverified(machine_made=True, original="pos", variant="pos")
    False
    """
    return machine_made and edit_claim(stated_kind(original, variant)).label_unverified


def edit_claim(
    kind: str, *, original_label: str | None = None, labels: Sequence[str] = ()
) -> Claim:
    """What an edit of ``kind`` claims for a variant of an original labelled ``original_label``
    in a task with the label set ``labels`` (the module docstring's table). Without a label
    (a span task) a ``keeps`` or ``changes`` edit claims no label, only its kind.

    Raises ``ValueError`` for a kind that is not one of ``KINDS``.

    >>> edit_claim(KEEPS, original_label="neutral", labels=["negative", "neutral", "positive"])
    Claim(kind='keeps', label='neutral')
    >>> edit_claim(CHANGES, original_label="neutral", labels=["negative", "neutral", "positive"])
    Claim(kind='changes', label=None)
    """
    if kind == PROBE:
        return Claim(PROBE, None)
    if kind == KEEPS:
        return Claim(KEEPS, original_label)
    if kind == CHANGES:
        changed = None if original_label is None else changed_label(original_label, labels)
        return Claim(CHANGES, changed)
    raise ValueError(f"unknown edit kind {kind!r}: one of {', '.join(KINDS)}")


def changed_label(label: str, labels: Sequence[str]) -> str | None:
    """The gold label a label-changing edit of an original labelled ``label`` claims: the other
    label of a binary task, the opposite of a polarity pair (``POLARITY``, any case) on a
    larger label set, else None (a negated "neutral" item is not reliably anything; nor is a
    label the set does not hold).

    >>> changed_label("positive", ["negative", "positive"])
    'negative'
    >>> changed_label("Positive", ["Negative", "Neutral", "Positive"])
    'Negative'
    >>> changed_label("neutral", ["negative", "neutral", "positive"]) is None
    True
    """
    if label not in labels:
        return None
    if len(labels) == 2:
        return labels[1] if label == labels[0] else labels[0]
    opposite = POLARITY.get(label.lower())
    return next((other for other in labels if other.lower() == opposite), None)
