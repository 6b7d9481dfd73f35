"""The interface every task type implements, and the parts registry higher apps fill.

A task type is two choices:

- **what an item is**: its *segments*, the texts a system reads for one prediction, in the
  order the model reads them, and which of them a breaker may edit (``Segment``);
- **what a system answers**: a label from the task's label set, or a span of the first
  segment (``TaskType.answers``: ``LABEL`` or ``SPAN``).

One module (or subpackage) of ``bibi.tasktypes`` per type subclasses ``TaskType`` and
registers one instance (``bibi.tasktypes.registry``). Apps never ask which type a task has:
they ask the task's type (``shared_task.kind``) for what they need. The pure rules live on
the type itself (readers and layouts, pair checks, cell keys, settings, columns). A part
that needs a higher app (model runners, guidance candidates, page fragments) lives in that
app, in a ``Parts`` registry filled by type or by answer kind: the app asks
``parts.of(shared_task.kind)``.

The contract of each method is in its docstring: what it returns, and what it raises on bad
input (``ValidationError`` with a message for the user; never a half-done write, since the
types write nothing).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from bibi.files import RowError
from bibi.labelmaps import LabelLookup
from bibi.tasktypes.examples import ExamplesChecked, ExamplesFile, ExistingExamples, ImportOptions
from bibi.tasktypes.items import Item, item_key
from bibi.tasktypes.pair_files import PAIRS, PairLayout, pair_input_from_fields
from bibi.tasktypes.registry import task_types
from bibi.tasktypes.rules import (
    CheckedPair,
    PairInput,
    PairRules,
    Refusal,
    StarterExample,
    StarterIndex,
    row_error,
)
from bibi.tasktypes.tokens import edit_out_of_sight
from edits.claims import pair_unverified as claimed_unverified

# What a system answers.
LABEL = "label"
SPAN = "span"


@dataclass(frozen=True)
class Segment:
    """One text of an item.

    ``field`` is the name of the ``Example`` field that holds it (a pair holds it as
    ``original_<field>`` and ``variant_<field>``); ``title`` is how pages and messages call it;
    ``editable`` says whether a breaker may change it ("setting": the task setting
    ``editable_text`` decides, see ``TaskType.editable_fields``); ``column`` names it in the
    files people read and write (examples, pair texts, predictions), by default its field.
    """

    field: str
    title: str
    editable: bool | str = True
    column: str = ""

    def __post_init__(self) -> None:
        if not self.column:
            object.__setattr__(self, "column", self.field)


class TaskType:
    """One kind of shared task. Subclasses set the class attributes and override what differs.

    ``key`` is stored in ``SharedTask.task_type`` and never changes once tasks use it;
    ``name`` is shown where a type is chosen; ``answers`` is ``LABEL`` or ``SPAN``.
    """

    key: ClassVar[str]
    name: ClassVar[str]
    description: ClassVar[str] = ""
    answers: ClassVar[str] = LABEL
    segments: ClassVar[tuple[Segment, ...]] = (Segment("text", "Text"),)
    # Template fragments of this type live under ``tasktypes/<template_key>/``.
    template_key: ClassVar[str] = ""

    def __str__(self) -> str:
        return self.key

    # -- what an item is ------------------------------------------------------------------

    @property
    def labelled(self) -> bool:
        """Items carry gold labels from the task's label set (label maps, label validation,
        contested labels, accuracy and macro-F1), rather than answer spans."""
        return self.answers == LABEL

    @property
    def segment_fields(self) -> tuple[str, ...]:
        return tuple(segment.field for segment in self.segments)

    # ``Example`` fields an item has besides its segments (shown with it), and its gold ones
    # (hidden where the dataset's labels are).
    example_extras: ClassVar[tuple[str, ...]] = ()
    gold_fields: ClassVar[tuple[str, ...]] = ("label",)

    def example_fields(self, *, gold: bool) -> tuple[str, ...]:
        """The ``Example`` fields an example of this type shows (``gold``: with its gold)."""
        return (*self.segment_fields, *self.example_extras, *(self.gold_fields if gold else ()))

    def editable_fields(self, editable_text: str = "") -> tuple[str, ...]:
        """The segments a breaker may change, by field, under the task setting
        ``editable_text`` (``"first"``, ``"second"`` or ``"both"``; types whose segments
        say where edits go ignore it)."""
        chosen = {"first": (0,), "second": (1,), "both": (0, 1)}.get(editable_text, (0, 1))
        return tuple(
            segment.field
            for index, segment in enumerate(self.segments)
            if segment.editable is True or (segment.editable == "setting" and index in chosen)
        )

    def item(self, record: Any) -> Item:
        """The item of an example (or any object or mapping with the segment fields)."""
        return tuple(_field(record, name) for name in self.segment_fields)

    def pair_fields(self, side: str) -> tuple[str, ...]:
        """The ``Pair`` fields that hold one side's segments (``side``: "original" or
        "variant"): ``<side>_<field>``, or the field itself for a segment no breaker edits
        (a span pair keeps its question once)."""
        return tuple(
            segment.field if segment.editable is False else f"{side}_{segment.field}"
            for segment in self.segments
        )

    def pair_items(self, pair: Any) -> tuple[Item, Item]:
        """The items of a pair's original and variant (a ``Pair`` or a mapping of its fields)."""
        return (
            tuple(_field(pair, name) for name in self.pair_fields("original")),
            tuple(_field(pair, name) for name in self.pair_fields("variant")),
        )

    def pair_texts(self, pair: Any) -> dict[str, str]:
        """A pair's texts by its ``Pair`` field names (``pair_fields`` of both sides)."""
        names = (*self.pair_fields("original"), *self.pair_fields("variant"))
        return {name: _field(pair, name) for name in dict.fromkeys(names)}

    def item_key(self, item: Sequence[str]) -> str:
        """The cell key of ``item`` (``bibi.tasktypes.items.item_key``)."""
        return item_key(item)

    def model_input(self, item: Sequence[str]) -> Any:
        """What a hosted system is given for ``item``: the text itself for one segment, the
        tuple of segments otherwise."""
        return item[0] if len(item) == 1 else tuple(item)

    # What a hosted model of this type reads (``fim_engine.check_model_dir(inputs=)``): single
    # texts, or sentence pairs.
    model_inputs: ClassVar[str] = "text"

    def model_options(self, shared_task: Any) -> dict[str, Any]:
        """Keyword arguments a hosted system's λmax and hints take in this task (which
        segments count: the ones a breaker may edit)."""
        return {}

    def item_fields(self, item: Sequence[str]) -> dict[str, str]:
        """``item`` as the ``Example`` / ``Prediction`` fields that hold its segments."""
        return dict(zip(self.segment_fields, item, strict=True))

    # -- pairs ----------------------------------------------------------------------------

    # The repeated-variant refusal says "<repeated_text> as row N".
    repeated_text: ClassVar[str] = "the same variant"
    # The pair-file layouts it takes; the first is also the layout of JSON pairs and forms.
    pair_layouts: ClassVar[tuple[PairLayout, ...]] = (PAIRS,)
    # What an upload form says of its pair files.
    pair_file_help: ClassVar[str] = (
        "CSV, TSV or JSON Lines: one pair a row (original_id, variant_text, variant_label, "
        "optional rationale and tags), or the 2017 two-rows-a-pair layout."
    )

    # -- self-reported predictions --------------------------------------------------------

    # What the predictions upload form says of its files, and what "no header row" adds.
    predictions_file_help: ClassVar[str] = (
        "CSV or TSV with a header row, or JSON Lines: columns id,label for the blind dev set; "
        "text,label (or sentence,label) for the pair texts. Or the 2017 layout, without a "
        "header: a line per text, label<TAB>sentence (the blind dev set also as a label per "
        "line, in the order of its texts). Several files (one per breaker team) may together "
        "predict the pair texts; a text predicted again with the same label counts once."
    )
    predictions_header_hint: ClassVar[str] = (
        "Add a header row naming the columns (id,label for the blind dev set; text,label for "
        "the pair texts), or choose the 2017 layout (no header: label<TAB>sentence per line)."
    )
    # The formats the predictions upload form offers, beyond judging by the content.
    prediction_formats: ClassVar[tuple[tuple[str, str], ...]] = (
        ("csv", "CSV with a header row"),
        ("tsv", "TSV with a header row"),
        ("jsonl", "JSON Lines"),
        ("2017", "The 2017 layout: no header, label<TAB>sentence (or a label) per line"),
    )

    def pair_input(self, row: int, fields: Mapping[str, Any]) -> PairInput:
        """A pair from one JSON object or form (in the type's first layout)."""
        return pair_input_from_fields(row, fields, self.pair_layouts[0])

    def pair_layout_problem(self, layout: str) -> str:
        """Why a file in ``layout`` is refused for this type ("" when it is taken)."""
        if not layout or layout in {each.name for each in self.pair_layouts}:
            return ""
        wanted = " or ".join(each.described() for each in self.pair_layouts)
        return f"this is a {self.name.lower()} task: give the pairs in the {wanted} layout, not the layout '{layout}'"

    def starter_index(self, examples: Iterable[StarterExample]) -> StarterIndex:
        """The starter set as ``check_pair`` looks originals up in it (examples in import
        order)."""
        raise NotImplementedError

    def check_pair(
        self,
        pair: PairInput,
        *,
        starter: StarterIndex,
        rules: PairRules,
        labels: LabelLookup | None = None,
    ) -> tuple[CheckedPair | None, list[str]]:
        """Check one pair on its own: the checked pair, or None and every reason why not
        (``Refusal`` strings where a rule and a setting can be named). ``labels`` reads a
        labelled pair's labels (a label map); by default the task's own labels only."""
        raise NotImplementedError

    def variant_key(self, pair: PairInput, checked: CheckedPair | None) -> Hashable | None:
        """What two pairs of one set may not share: the variant's item (normalized, as the
        pair fields ``pair_fields("variant")`` will hold it), or None when it cannot be told."""
        if checked is None:
            return None
        return self.checked_items(checked)[1]

    def checked_items(self, checked: CheckedPair) -> tuple[Item, Item]:
        """The items of a checked pair's original and variant, normalized, as the pair's
        fields will hold them (``pair_fields``): what systems are run on."""
        values = {"variant_text": checked.variant_text, **checked.fields}
        variant = tuple(values[name] for name in self.pair_fields("variant"))
        return self.item(checked.original), variant

    def pair_warnings(
        self, original: Item, variant: Item, *, max_sequence_length: int | None
    ) -> list[str]:
        """Warnings a pair's items carry: an edit so far into a text that systems, which read
        only ``max_sequence_length`` sub-word tokens, may never see it."""
        warnings = (
            edit_out_of_sight(before, after, max_sequence_length=max_sequence_length)
            for before, after in zip(original, variant, strict=True)
        )
        return [warning for warning in warnings if warning]

    def pair_unverified(self, pair: PairInput, original: StarterExample, label: str) -> bool:
        """Whether a checked pair is stored *label unverified*: a machine-made edit that
        states a label other than the original's (``edits.claims.pair_unverified``, the one
        rule of what a machine-made edit claims)."""
        return claimed_unverified(
            machine_made=pair.label_unverified, original=original.label, variant=label
        )

    def check_pairs(
        self,
        pairs: Sequence[PairInput],
        *,
        starter: StarterIndex,
        rules: PairRules,
        label_map: Mapping[str, str] | None = None,
        taken_variants: Mapping[Hashable, int] | None = None,
    ) -> tuple[list[CheckedPair], list[RowError]]:
        """Check a whole set: each pair on its own, then no variant twice.

        ``label_map`` translates a labelled set's labels (``bibi.labelmaps``); a map whose
        target is not a task label raises ``ValidationError``. ``taken_variants`` maps the
        variant keys already in the set (pairs added to a draft one by one) to their rows.
        Returns the checked pairs and, in row order, every problem found; the set may be
        stored only when the second list is empty.
        """
        labels = None
        if self.labelled:
            # A refused label suggests a map from the labels the set actually holds.
            labels = LabelLookup.build(label_map, labels=rules.labels).seeing(
                raw for pair in pairs for raw in (pair.original_label, pair.variant_label)
            )
        checked: list[CheckedPair] = []
        errors: list[RowError] = []
        seen: dict[Hashable, int] = dict(taken_variants or {})
        for pair in pairs:
            result, problems = self.check_pair(pair, starter=starter, rules=rules, labels=labels)
            key = self.variant_key(pair, result)
            if key is not None and key in seen:
                problems.append(
                    Refusal(f"{self.repeated_text} as row {seen[key]}", kind="repeated")
                )
            elif key is not None:
                seen[key] = pair.row
            if problems:
                errors.extend(row_error(pair.row, problem) for problem in problems)
            elif result is not None:
                checked.append(result)
        errors.sort(key=lambda error: error.line)
        return checked, errors

    # -- examples -------------------------------------------------------------------------

    # The file formats its examples may come in (``bibi.files`` and the type's own).
    example_formats: ClassVar[tuple[str, ...]] = ()

    def examples_read(
        self, data: bytes, *, filename: str, options: ImportOptions, labels: Iterable[str]
    ) -> ExamplesFile:
        """Decode and read an examples file before any database work. Raises
        ``ExamplesRejected`` for a file that cannot be read, ``ValidationError`` for a bad
        option (a label map whose target is not one of ``labels``)."""
        raise NotImplementedError

    def examples_check(
        self, upload: ExamplesFile, *, existing: ExistingExamples, split: str, partial: bool = False
    ) -> ExamplesChecked:
        """Check what ``examples_read`` read against itself and the dataset's ``existing``
        examples; the examples are fields of ``Example`` rows, in file order. Every problem
        of every row is in ``errors``; with ``partial`` the examples are the rows that pass
        even when others do not (a partial import stores them)."""
        raise NotImplementedError

    def existing_key(self, example: Any) -> tuple[str, ...] | None:
        """What an example of the dataset is compared with new rows by (None: ids only)."""
        return None

    # -- settings -------------------------------------------------------------------------

    # ``SharedTask`` settings that only some types use, and the values a new task of this
    # type starts with where a form leaves them empty.
    own_settings: ClassVar[tuple[str, ...]] = ()
    setting_defaults: ClassVar[dict[str, Any]] = {}

    def hidden_settings(self) -> set[str]:
        """Settings other types use and this one does not (a settings page leaves them out)."""
        others = {name for kind in task_types() for name in kind.own_settings}
        return others - set(self.own_settings)

    def scoring_settings(self, shared_task: Any) -> dict[str, Any]:
        """The settings of ``shared_task`` its scores depend on under this type, as a
        snapshot records them (``labels``: the label set, empty without labels)."""
        return {"labels": list(shared_task.labels) if self.labelled else []}

    def settings_problems(self, values: Mapping[str, Any]) -> dict[str, str]:
        """Problems of a task's settings under this type, by field ({} when none). ``values``
        maps ``SharedTask`` field names to values."""
        return {}


def _field(record: Any, name: str) -> str:
    value = record.get(name) if isinstance(record, Mapping) else getattr(record, name, None)
    return "" if value is None else str(value)


P = TypeVar("P")


class Parts(Generic[P]):
    """A higher app's parts of each task type (a model runner, guidance candidates, a form).

    Fill it by type key or by answer kind; ``of`` finds the type's own part first, then its
    answer kind's, and raises ``LookupError`` naming what is missing otherwise::

        runners: Parts[Runner] = Parts("model runner")
        runners.register(LABEL, LabelRunner())       # every type whose systems answer labels
        runners.register("span_extraction", SpanRunner())
        runners.of(shared_task.kind).cells(...)
    """

    def __init__(self, what: str) -> None:
        self.what = what
        self._parts: dict[str, P] = {}

    def register(self, key: str, part: P) -> P:
        if key in self._parts:
            raise ValueError(f"a {self.what} is registered for {key!r} already")
        self._parts[key] = part
        return part

    def of(self, kind: TaskType) -> P:
        for key in (kind.key, kind.answers):
            if key in self._parts:
                return self._parts[key]
        raise LookupError(f"the task type {kind.key!r} has no {self.what}")

    def maker(self, key: str) -> Callable[[P], P]:
        """``register`` as a decorator."""
        return lambda part: self.register(key, part)
