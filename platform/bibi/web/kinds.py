"""What the pages do differently by task type: the web's parts of each type.

Pages never ask which type a task is. They ask three things:

- **the type itself** for its facts (``shared_task.kind``: ``labelled``, ``segments`` and their
  titles, ``editable_fields``, ``pair_input``);
- **``PAGE_KINDS``** (a ``bibi.tasktypes.Parts``, filled here by answer kind) for the web's part
  of it: the pair forms, the pair editor's behaviour, the words pages use inside their
  sentences (``words``: ``{{ shared_task|kind_word:"accuracy" }}``, ``page_word``);
- **the type's template fragments** (``fragment_names``: ``{% kind_include "pair_cells" %}``
  renders ``web/tasktypes/<template key>/pair_cells.html``, else
  ``web/tasktypes/<answer kind>/pair_cells.html``), so a labelled type without fragments of its
  own reads as the ``label`` ones, which draw an item by its segments.

A new type whose systems answer labels needs nothing here; a new kind of answer registers a
``PageKind`` and a folder of fragments.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from bibi.evaluation.models import SnapshotItem
from bibi.guidance.jobs import JobRecord
from bibi.guidance.suggest import SuggestRequest
from bibi.sharedtasks.models import Example, SharedTask
from bibi.tasktypes import LABEL, SPAN, Parts, TaskType
from bibi.tasktypes.rules import PairInput
from bibi.web.explorer import span_marks
from bibi.web.forms import PairAddForm, PairEditorForm
from bibi.web.span_forms import SpanPairAddForm, SpanPairEditorForm
from bibi.web.span_guidance import (
    span_check_context,
    span_draft_request,
    span_machine_problems,
    span_refill,
)

# Where a type's fragments live (under a template directory).
FRAGMENTS = "web/tasktypes"

Fields = dict[str, Any]


@dataclass(frozen=True)
class PageKind:
    """The pages' part of the task types whose systems answer one kind of answer.

    - ``add_form``, ``editor_form``: the "Add a pair" form and the pair editor's form, each
      taking ``shared_task=`` (their ``media`` are the scripts the page loads with them);
    - ``words``: what pages call things inside their sentences (``kind_word``); every kind has
      the same keys;
    - the pair editor: ``editor_initial(example)`` the fields it starts with beyond the
      original and its texts; ``draft_request(example, cleaned)`` the draft check asked for
      the variant; ``editor_refill(record, check)`` the fields again when a followed job's page
      shows (``check``: its answer, None while it waits); ``check_context(check)`` what the
      page draws a draft check from; ``machine_problems(cleaned)`` why a pair cannot be checked
      or added as it stands, by field; ``machine_pair(pair, cleaned)`` the pair as stored when
      its variant is still a machine's suggestion (``machine_text``);
    - ``explorer_marks(item, entry)``: what the item explorer adds to an entry of its page;
    - ``suggestions_page``: suggested edits also have a page of their own, which the guidance
      links to from every original (otherwise they are in the pair editor only).
    """

    add_form: type[PairAddForm]
    editor_form: type[PairEditorForm]
    words: Mapping[str, str]
    editor_initial: Callable[[Example], Fields]
    draft_request: Callable[[Example, Fields], SuggestRequest]
    editor_refill: Callable[[JobRecord, Fields | None], Fields]
    check_context: Callable[[Fields], Fields]
    machine_problems: Callable[[Fields], dict[str, str]]
    machine_pair: Callable[[PairInput, Fields], PairInput]
    explorer_marks: Callable[[SnapshotItem, Fields], None]
    suggestions_page: bool = False


def _label_draft_request(example: Example, cleaned: Fields) -> SuggestRequest:
    # An item of several texts has a field per text the task lets breakers edit; one the
    # form does not have is the original's.
    return SuggestRequest(
        original_id=example.external_id,
        variant_text=cleaned.get("variant_text"),
        variant_text_b=cleaned.get("variant_text_b"),
        variant_label=cleaned["variant_label"],
    )


def _label_refill(record: JobRecord, check: Fields | None) -> Fields:
    # The label the job's draft was checked with.
    return {"variant_label": record.variant_label} if record.variant is not None else {}


def _label_machine_pair(pair: PairInput, cleaned: Fields) -> PairInput:
    # A machine's suggestion taken as offered (every variant text of the form still the
    # machine's), with a new label: nobody checked that label (the type keeps the flag only
    # where the label differs from the original's).
    texts = [name for name in cleaned if name.startswith("variant_text")]
    given = [(cleaned.get(name) or "").strip() for name in texts]
    machine = [
        (cleaned.get(name.replace("variant_", "machine_", 1)) or "").strip() for name in texts
    ]
    if any(machine) and machine == given:
        return dataclasses.replace(pair, label_unverified=True)
    return pair


LABEL_WORDS = {
    "answer": "label",
    "accuracy": "accuracy",
    "f1": "F1",
    "dev_items": "texts",
    "keep": "keep the label",
    "change": "change the label",
    "contested": "label",
    "contest_heading": "label",
    "pair_column": "Labels",
    "pair_gold": "each with its gold label",
}
SPAN_WORDS = {
    "answer": "answer",
    "accuracy": "answer accuracy",
    "f1": "Mean token F1",
    "dev_items": "items",
    "keep": "keep the answer",
    "change": "move the answer",
    "contested": "pair",
    "contest_heading": "pair's answer",
    "pair_column": "Question",
    "pair_gold": "with the original's question (never changed) and the variant's answer, "
    "a span of the variant sentence",
}

PAGE_KINDS: Parts[PageKind] = Parts("page kind")
PAGE_KINDS.register(
    LABEL,
    PageKind(
        add_form=PairAddForm,
        editor_form=PairEditorForm,
        words=LABEL_WORDS,
        editor_initial=lambda example: {"variant_label": example.label},
        draft_request=_label_draft_request,
        editor_refill=_label_refill,
        check_context=lambda check: {},
        machine_problems=lambda cleaned: {},
        machine_pair=_label_machine_pair,
        explorer_marks=lambda item, entry: None,
    ),
)
PAGE_KINDS.register(
    SPAN,
    PageKind(
        add_form=SpanPairAddForm,
        editor_form=SpanPairEditorForm,
        words=SPAN_WORDS,
        editor_initial=lambda example: {},
        draft_request=span_draft_request,
        editor_refill=span_refill,
        check_context=span_check_context,
        machine_problems=span_machine_problems,
        # An answer-moving suggestion is added only with the answer the breaker gave.
        machine_pair=lambda pair, cleaned: pair,
        explorer_marks=span_marks,
        suggestions_page=True,
    ),
)


def page_kind(shared_task: SharedTask) -> PageKind:
    """The pages' part of ``shared_task``'s type."""
    return PAGE_KINDS.of(shared_task.kind)


def page_word(shared_task: SharedTask, name: str) -> str:
    """What pages call ``name`` in ``shared_task`` (``LookupError`` for a word no kind has)."""
    words = page_kind(shared_task).words
    if name not in words:
        known = ", ".join(sorted(words))
        raise LookupError(f"pages have no word {name!r} for a task's type: the words are {known}")
    return words[name]


def fragment_names(kind: TaskType, name: str) -> list[str]:
    """The templates that may hold ``kind``'s fragment ``name``, its own first."""
    return [
        f"{FRAGMENTS}/{kind.template_key or kind.key}/{name}.html",
        f"{FRAGMENTS}/{kind.answers}/{name}.html",
    ]


def variant_initial(shared_task: SharedTask, example: Example | None) -> Fields:
    """A pair form's variant texts to start from: the original's, one field per segment a
    breaker may edit (``variant_<field>``, as ``TaskType.pair_input`` reads them)."""
    kind = shared_task.kind
    texts = dict(zip(kind.segment_fields, kind.item(example), strict=True)) if example else {}
    return {
        f"variant_{field}": texts.get(field, "")
        for field in kind.editable_fields(shared_task.editable_text)
    }
