"""Span extraction (the 2017 QA-SRL track): a sentence and a question about one of its
predicates in, a span of the sentence out.

An item is (sentence, question); breakers edit the sentence, never the question, and give
the variant's answer spans. Its pieces: ``answers`` (gold spans as files give them),
``reading`` (the QA-SRL files and CSV / JSON Lines items), ``checks`` (its pair rules).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import PurePath
from typing import Any

from bibi.files import FileFormatError
from bibi.labelmaps import LabelLookup
from bibi.tasktypes.base import SPAN, Segment, TaskType
from bibi.tasktypes.examples import (
    ExamplesChecked,
    ExamplesFile,
    ExamplesRejected,
    ExistingExamples,
    ImportOptions,
)
from bibi.tasktypes.pair_files import SPAN_PAIRS
from bibi.tasktypes.rules import CheckedPair, PairInput, PairRules, StarterExample, StarterIndex
from bibi.tasktypes.span_extraction.checks import check_span_pair, starter_key
from bibi.tasktypes.span_extraction.reading import SPAN_FORMATS, span_examples, span_file_read


class SpanExtraction(TaskType):
    key = "span_extraction"
    name = "Span extraction (sentence + question -> answer span)"
    description = "A sentence and a question in, a span of the sentence out (2017: QA-SRL)."
    answers = SPAN
    segments = (Segment("text", "Sentence"), Segment("question", "Question", editable=False))
    template_key = "span_extraction"
    example_extras = ("predicate_index", "predicate")
    gold_fields = ("answers",)
    example_formats = SPAN_FORMATS
    repeated_text = "the same variant and question"
    own_settings = ("answer_mode", "answer_f1_threshold")
    setting_defaults = {"answer_mode": "token_f1"}
    pair_layouts = (SPAN_PAIRS,)
    pair_file_help = (
        "CSV, TSV or JSON Lines: one pair a row (original_id, variant_text, "
        "variant_answers: texts joined by ' ### ' or a JSON list, empty for the "
        "original's answers found again; optional question, rationale and tags)."
    )

    predictions_file_help = (
        "CSV or TSV with a header row, or JSON Lines: an answer per item, as its text or its "
        "character offsets in the sentence (end exclusive). The blind dev set: id,answer or "
        "id,start,end; the pair items: text,question,answer (or text,question,start,end). "
        "Several files may together answer the pair items; an item answered again with the "
        "same answer counts once."
    )
    predictions_header_hint = (
        "Add a header row naming the columns: id,answer (or id,start,end) for the blind dev "
        "set; text,question,answer (or start,end) for the pair items."
    )
    prediction_formats = (
        ("csv", "CSV with a header row"),
        ("tsv", "TSV with a header row"),
        ("jsonl", "JSON Lines"),
    )

    def pair_layout_problem(self, layout: str) -> str:
        if not layout or layout == SPAN_PAIRS.name:
            return ""
        return (
            "this is a span task: give the pairs in the span_pairs layout (original_id, "
            f"question, variant_text, variant_answers), not the label layout '{layout}'"
        )

    def examples_read(
        self, data: bytes, *, filename: str, options: ImportOptions, labels: Iterable[str]
    ) -> ExamplesFile:
        filename = PurePath(filename).name
        try:
            reading, encoding, chosen = span_file_read(
                data=data,
                filename=filename,
                file_format=options.file_format,
                drop_unmatched=options.drop_unmatched,
            )
        except FileFormatError as error:
            raise ExamplesRejected.from_format_error(error, source=filename) from None
        return ExamplesFile(reading.text, filename, chosen, encoding, reading=reading)

    def examples_check(
        self, upload: ExamplesFile, *, existing: ExistingExamples, split: str, partial: bool = False
    ) -> ExamplesChecked:
        # The rows that pass are kept whatever the others hold (``partial`` decides the import).
        return span_examples(upload.reading, existing=existing)

    def existing_key(self, example: Any) -> tuple[str, ...] | None:
        # Span items are told apart by their ids only: one sentence has many questions, and
        # the same sentence and question under two ids (two predicates) are two examples.
        return None

    def starter_index(self, examples: Iterable[StarterExample]) -> StarterIndex:
        return StarterIndex(examples, key=starter_key, labelled=False)

    def check_pair(
        self,
        pair: PairInput,
        *,
        starter: StarterIndex,
        rules: PairRules,
        labels: LabelLookup | None = None,
    ) -> tuple[CheckedPair | None, list[str]]:
        return check_span_pair(pair, starter=starter, rules=rules)

    def scoring_settings(self, shared_task: Any) -> dict[str, Any]:
        return {
            "labels": [],
            "answer_mode": shared_task.answer_mode,
            "answer_f1_threshold": shared_task.answer_f1_threshold,
        }

    def settings_problems(self, values: Mapping[str, Any]) -> dict[str, str]:
        problems = {}
        if values.get("validation_mode", "off") != "off":
            problems["validation_mode"] = "Label validation is for tasks whose items have labels."
        return problems
