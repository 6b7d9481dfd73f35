"""What every labelled task type shares: items of one or more texts, one gold label each.

Text classification (one text) and sentence-pair classification (a premise and a hypothesis)
are the same machine over different segments, so they share this base:

- **examples files**: an id (or the line number), one column per segment, a label the task's
  label set (or a label map) knows; one item (its texts, normalized) has one label in a
  dataset (``bibi.tasktypes.examples``);
- **pairs**: an original from the starter set (by id, or by its texts) and a variant with its
  gold label. On top of the shared rules (``bibi.tasktypes.rules``), applied to each segment a
  breaker edited, a pair is refused when the original is not in the starter set (a given
  original text must equal the example's, a given original label its label), when it edits
  a segment the task does not let breakers edit, when it edits none, or when the variant's
  label, after the optional label map, is not in the task's label set.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any, ClassVar

from bibi.labelmaps import LabelLookup
from bibi.tasktypes.base import LABEL, TaskType
from bibi.tasktypes.examples import (
    Columns,
    ExamplesChecked,
    ExamplesFile,
    ExistingExamples,
    ImportOptions,
    labelled_examples,
    labelled_file_read,
)
from bibi.tasktypes.rules import (
    CheckedPair,
    PairInput,
    PairRules,
    Refusal,
    StarterExample,
    StarterIndex,
    free_text_problems,
    label_resolve,
    minimal_edit_problems,
    refusals,
    tags_checked,
    variant_problems,
)
from bibi.tasktypes.tokens import edit_out_of_sight
from bibi.texts import normalize_text, text_problems


def _not_original(reason: str) -> tuple[None, list[str]]:
    return None, [Refusal(reason, kind="original")]


class LabelledTaskType(TaskType):
    """A task type whose systems answer a label of the task's label set."""

    answers = LABEL
    own_settings = ("labels",)
    # The file formats of its examples (``bibi.files``; ``sst2``: ``LABEL sentence`` lines).
    example_formats: ClassVar[tuple[str, ...]] = ("csv", "tsv", "jsonl")
    # Published layouts its examples files may come in besides the platform's own (id, the
    # segments by their columns, label): read in that layout when the file has its columns.
    known_layouts: ClassVar[tuple[Columns, ...]] = ()

    def settings_problems(self, values: Mapping[str, Any]) -> dict[str, str]:
        if "labels" in values and not values["labels"]:
            return {"labels": "A label task needs its labels, separated by commas."}
        return {}

    # -- examples -------------------------------------------------------------------------

    def examples_read(
        self, data: bytes, *, filename: str, options: ImportOptions, labels: Iterable[str]
    ) -> ExamplesFile:
        """Read a labelled file (``bibi.tasktypes.examples.labelled_file_read``)."""
        lookup = LabelLookup.build(options.label_map, labels=list(labels))
        columns = Columns(
            id=options.id_column,
            texts=tuple(
                (segment.field, options.text_columns.get(segment.field) or segment.column)
                for segment in self.segments
            ),
            label=options.label_column,
        )
        return labelled_file_read(
            data,
            filename=filename,
            columns=columns,
            lookup=lookup,
            options=options,
            alternatives=self.known_layouts,
        )

    def examples_check(
        self, upload: ExamplesFile, *, existing: ExistingExamples, split: str, partial: bool = False
    ) -> ExamplesChecked:
        return labelled_examples(upload, existing=existing, split=split, partial=partial)

    def existing_key(self, example: Any) -> tuple[str, ...]:
        """The normalized item an example of the dataset is compared by."""
        return tuple(normalize_text(text) for text in self.item(example))

    # -- pairs ----------------------------------------------------------------------------

    def starter_index(self, examples: Iterable[StarterExample]) -> StarterIndex:
        normalized = (
            replace(e, text=normalize_text(e.text), text_b=normalize_text(e.text_b))
            for e in examples
        )
        return StarterIndex(normalized, key=self.item, labelled=True)

    def _texts_named(self) -> tuple[str, str]:
        """How messages name a pair's original texts, and how a pair names it without id."""
        if len(self.segments) == 1:
            return "the original text", "its text"
        titles = " and ".join(segment.title.lower() for segment in self.segments)
        return f"the original {titles}", f"its {titles}"

    def original_resolve(
        self, pair: PairInput, starter: StarterIndex, labels: LabelLookup
    ) -> tuple[StarterExample | None, list[str]]:
        """The starter example a pair names (by id, else by its normalized texts), or None
        and why not; a given original label must be the example's."""
        given = tuple(normalize_text(getattr(pair, f"original_{f}")) for f in self.segment_fields)
        what, by_text = self._texts_named()
        # Said first: "not in the starter set" would hide that it only looks like one.
        text_wrong = refusals(
            (f"{what} {problem}" for text in given for problem in text_problems(text)),
            kind="original",
        )
        if text_wrong:
            return None, text_wrong
        original_id = pair.original_id.strip()
        if original_id:
            original = starter.by_id.get(original_id)
            if original is None:
                return _not_original(
                    f"the original id '{original_id[:200]}' is not in the starter set"
                )
            shown = self.item(original)
            if any(text and text != shown[i] for i, text in enumerate(given)):
                return _not_original(
                    f"{what} does not match starter example '{original_id}': "
                    f"it is {' / '.join(repr(text) for text in shown)}"
                )
        elif all(given):
            original = starter.by_item.get(given)
            if given in starter.conflicting:
                ids = ", ".join(f"'{i}'" for i in starter.conflicting[given])
                return _not_original(
                    f"{what} is in the starter set with different labels ({ids}): "
                    "give the original's id"
                )
            if original is None:
                missing = "a sentence" if len(given) == 1 else "an item"
                return _not_original(f"{what} is not {missing} of the starter set")
        else:
            return _not_original(
                f"the pair names no original: give its starter-set id (or {by_text})"
            )
        if pair.original_label.strip():
            given_label, problem = label_resolve("original", pair.original_label, labels)
            if problem:
                return None, refusals([problem], kind="label", setting="labels")
            if given_label != original.label:
                return _not_original(
                    f"the original's label is '{original.label}' in the starter set, "
                    f"not {labels.described(pair.original_label)}"
                )
        return original, []

    def _variant_texts(self, pair: PairInput, original: StarterExample | None) -> dict[str, str]:
        """The variant's texts by field, normalized: with several segments, one the pair
        leaves empty is the original's."""
        texts = {f: normalize_text(getattr(pair, f"variant_{f}")) for f in self.segment_fields}
        if len(texts) > 1 and original is not None:
            shown = dict(zip(self.segment_fields, self.item(original), strict=True))
            texts = {f: text or shown[f] for f, text in texts.items()}
        return texts

    def _what(self, field: str) -> str:
        if len(self.segments) == 1:
            return "the variant"
        title = next(s.title for s in self.segments if s.field == field)
        return f"the variant {title.lower()}"

    def _edit_problems(
        self, original: StarterExample, texts: dict[str, str], rules: PairRules
    ) -> tuple[int, list[str]]:
        """The rules on each segment the variant changed; the others must be unchanged."""
        shown = dict(zip(self.segment_fields, self.item(original), strict=True))
        changed = [f for f in self.segment_fields if texts[f] != shown[f]]
        if len(self.segments) > 1 and not changed:
            return 0, refusals(["the variant is identical to the original"], kind="unchanged")
        distance, problems = 0, []
        for field in changed or list(self.segment_fields):
            if field not in rules.editable:
                title = next(s.title for s in self.segments if s.field == field)
                editable = " and ".join(
                    s.title.lower() for s in self.segments if s.field in rules.editable
                )
                problems.append(
                    Refusal(
                        f"{self._what(field)} differs from the original's: this task lets "
                        f"breakers edit only the {editable}",
                        kind="fixed",
                        setting="editable_text",
                    )
                    if len(self.segments) > 1
                    else Refusal(f"the {title.lower()} may not change", kind="fixed")
                )
                continue
            edits, edit_problems = minimal_edit_problems(
                shown[field], texts[field], rules=rules, what=self._what(field)
            )
            distance += edits
            problems += edit_problems
        return distance, problems

    def check_pair(
        self,
        pair: PairInput,
        *,
        starter: StarterIndex,
        rules: PairRules,
        labels: LabelLookup | None = None,
    ) -> tuple[CheckedPair | None, list[str]]:
        labels = labels or LabelLookup.build(None, labels=rules.labels)
        original, problems = self.original_resolve(pair, starter, labels)
        texts = self._variant_texts(pair, original)
        for field, text in texts.items():
            # With several texts an empty one is the original's (when the original is known).
            if text or len(texts) == 1 or not any(texts.values()):
                problems += variant_problems(text, rules, what=self._what(field))
        label, label_problem = label_resolve("variant", pair.variant_label, labels)
        if label_problem:
            problems.append(Refusal(label_problem, kind="label", setting="labels"))
        rationale = pair.rationale.strip()
        problems += free_text_problems(rationale, pair.source_id, rules)
        tags, tag_problems = tags_checked(pair.tags, rules)
        problems += tag_problems
        distance = 0
        if original is not None and all(texts.values()):
            distance, edit_problems = self._edit_problems(original, texts, rules)
            problems += edit_problems
        if problems or original is None or label is None:
            return None, problems
        shown = dict(zip(self.segment_fields, self.item(original), strict=True))
        warnings = [
            edit_out_of_sight(shown[f], texts[f], max_sequence_length=rules.max_sequence_length)
            for f in self.segment_fields
        ]
        first, *others = self.segment_fields
        return (
            CheckedPair(
                row=pair.row,
                source_id=pair.source_id.strip(),
                original=original,
                variant_text=texts[first],
                variant_label=label,
                rationale=rationale,
                tags=tags,
                edit_distance=distance,
                warnings=tuple(warning for warning in warnings if warning),
                fields={
                    **{f"original_{f}": shown[f] for f in others},
                    **{f"variant_{f}": texts[f] for f in others},
                },
                label_unverified=self.pair_unverified(pair, original, label),
            ),
            [],
        )

    def variant_key(self, pair: PairInput, checked: CheckedPair | None) -> Any:
        if checked is None and len(self.segments) == 1:
            # One text: a pair refused for another reason still takes its variant.
            variant = normalize_text(pair.variant_text)
            return (variant,) if variant else None
        return super().variant_key(pair, checked)
