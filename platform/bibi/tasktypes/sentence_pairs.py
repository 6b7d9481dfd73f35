"""Sentence-pair classification: a premise and a hypothesis in, one label of the task's label
set out (the shape of NLI: entailment, neutral, contradiction; and of most adversarial
shared tasks since 2017).

An item is (premise, hypothesis): ``Example.text`` and ``Example.text_b``. The task setting
``editable_text`` says which a breaker may change: the hypothesis (``second``, the default,
as in SNLI-style counterfactual revisions), the premise (``first``) or either (``both``).
The minimal-pair rules apply to each text the variant changes; a text the task keeps fixed
must stay the original's. λmax and word hints count the editable texts' words only.

Files: examples come as CSV, TSV or JSON Lines with ``id``, ``premise``, ``hypothesis``,
``label`` (an organizer may name other columns), or in the published SNLI layout
``sentence1``, ``sentence2``, ``gold_label`` (no ids: the line number is the id), as
``../shared/data/nli-cad`` ships it. Pairs come in the ``sentence_pairs`` layout.
"""

from __future__ import annotations

from typing import Any

from bibi.tasktypes.base import Segment
from bibi.tasktypes.examples import Columns
from bibi.tasktypes.labelled import LabelledTaskType
from bibi.tasktypes.pair_files import PairLayout

# What a hosted model's λmax and hints count, by the task setting ``editable_text``
# (``fim_engine``'s ``editable``).
EDITABLE = {"first": "premise", "second": "hypothesis", "both": "both"}

SENTENCE_PAIRS = PairLayout(
    "sentence_pairs",
    columns=(
        "original_id",
        "original_premise",
        "original_hypothesis",
        "original_label",
        "variant_premise",
        "variant_hypothesis",
        "variant_label",
        "rationale",
        "tags",
    ),
    requires=("variant_label",),
    markers=("variant_premise", "variant_hypothesis"),
    rank=1,
    renames={
        "original_premise": "original_text",
        "original_hypothesis": "original_text_b",
        "variant_premise": "variant_text",
        "variant_hypothesis": "variant_text_b",
    },
    names_original=("original_id", "original_premise", "original_hypothesis"),
)

# SNLI's own files (and the counterfactual revisions of ``nli-cad``): no ids.
SNLI_LAYOUT = Columns(
    id=None, texts=(("text", "sentence1"), ("text_b", "sentence2")), label="gold_label"
)


class SentencePairs(LabelledTaskType):
    key = "sentence_pair_classification"
    name = "Sentence-pair classification (premise + hypothesis -> label)"
    description = (
        "A premise and a hypothesis in, one label of the task's label set out (the shape of NLI)."
    )
    segments = (
        Segment("text", "Premise", editable="setting", column="premise"),
        Segment("text_b", "Hypothesis", editable="setting", column="hypothesis"),
    )
    template_key = "sentence_pairs"
    model_inputs = "pair"
    example_formats = ("csv", "tsv", "jsonl")
    known_layouts = (SNLI_LAYOUT,)
    own_settings = ("labels", "editable_text")
    setting_defaults = {"labels": ["entailment", "neutral", "contradiction"]}
    pair_layouts = (SENTENCE_PAIRS,)
    pair_file_help = (
        "CSV, TSV or JSON Lines: one pair a row (original_id, variant_premise and/or "
        "variant_hypothesis, variant_label; a text left out stays the original's; optional "
        "rationale and tags)."
    )

    predictions_file_help = (
        "CSV or TSV with a header row, or JSON Lines: columns id,label for the blind dev set; "
        "premise,hypothesis,label for the pair items. Several files may together predict the "
        "pair items; an item predicted again with the same label counts once."
    )
    predictions_header_hint = (
        "Add a header row naming the columns: id,label for the blind dev set; "
        "premise,hypothesis,label for the pair items."
    )
    prediction_formats = (
        ("csv", "CSV with a header row"),
        ("tsv", "TSV with a header row"),
        ("jsonl", "JSON Lines"),
    )

    def model_options(self, shared_task: Any) -> dict[str, Any]:
        return {"editable": EDITABLE[shared_task.editable_text]}
