"""The sentence-pair cast: the label cast's people around an NLI task (premise + hypothesis ->
entailment, neutral or contradiction) with two hosted systems of known geometry, for the
guidance, baseline and page tests of sentence pairs.

The systems are ``tests/fim_engine/conftest.py``'s ``build_agreement_pair_bow``: a ``bow-pair``
that reads the sentiment axis of the premise's words and of the hypothesis's; entailment when
both lean the same way, contradiction when they lean opposite ways, neutral when either has no
sentiment word. An antonym of the hypothesis's decisive word ("good" -> "bad") turns an
entailment into a contradiction; a synonym keeps it.
"""

from __future__ import annotations

from pathlib import Path

from bibi.sharedtasks import services
from bibi.sharedtasks.models import Dataset, Example, SharedTask
from bibi.systems.models import System
from bibi.tasktypes import SENTENCE_PAIRS

from ..fim_engine.conftest import NLI_LABELS, build_agreement_pair_bow
from .conftest import Cast, build_cast
from .evaluation.conftest import hosted_version
from .pairs.conftest import start_phase_now

# (id, premise, hypothesis, gold label)
Row = tuple[str, str, str, str]
NLI_STARTER: list[Row] = [
    ("n1", "the film is fun", "it is good", "entailment"),
    ("n2", "the movie was dull", "the story was boring", "entailment"),
    ("n3", "the film is good", "it was awful", "contradiction"),
    ("n4", "a charming story", "it is a film", "neutral"),
]
NLI_BLIND_DEV: list[Row] = [
    ("d1", "the story is witty", "it is great", "entailment"),
    ("d2", "the story was dull", "it is charming", "contradiction"),
    ("d3", "a movie", "it was boring", "neutral"),
]


def _pair_dataset(shared_task: SharedTask, split: str, rows: list[Row]) -> Dataset:
    dataset = services.dataset_get_or_create(shared_task=shared_task, split=split)
    Example.objects.bulk_create(
        Example(
            dataset=dataset,
            external_id=eid,
            text=premise,
            text_b=hypothesis,
            label=label,
            position=i,
        )
        for i, (eid, premise, hypothesis, label) in enumerate(rows)
    )
    return dataset


def build_nli_cast(
    *,
    current_phase: str = "build",
    editable_text: str = "second",
    labels: tuple[str, ...] = tuple(NLI_LABELS),
) -> Cast:
    """The cast around the sentence-pair task "snli" (no hosted system yet); breakers may edit
    the texts ``editable_text`` names (``first``, ``second``, ``both``). With two ``labels``
    (contradiction, entailment) the items of other labels are left out."""

    def rows(items: list[Row]) -> list[Row]:
        return [row for row in items if row[3] in labels]

    cast = build_cast(
        current_phase=current_phase,
        name="SNLI pairs",
        slug="snli",
        task_type=SENTENCE_PAIRS.key,
        labels=list(labels),
        datasets=lambda task: (
            _pair_dataset(task, "starter", rows(NLI_STARTER)),
            _pair_dataset(task, "blind_dev", rows(NLI_BLIND_DEV)),
            services.dataset_get_or_create(shared_task=task, split="train"),
        ),
    )
    SharedTask.objects.filter(id=cast.shared_task.id).update(editable_text=editable_text)
    cast.shared_task.refresh_from_db()
    return cast


def build_nli_task(
    tmp_path: Path,
    *,
    editable_text: str = "second",
    labels: tuple[str, ...] = tuple(NLI_LABELS),
) -> tuple[Cast, list[System]]:
    """The NLI cast in its break phase with two ready hosted systems of the builder team, both
    the pair model of known geometry (validated with the task's ``editable_text``), saved in
    ``tmp_path / "agreement-pair-bow"``."""
    cast = build_nli_cast(editable_text=editable_text, labels=labels)
    model = build_agreement_pair_bow(tmp_path / "agreement-pair-bow", labels=list(labels))
    systems = [
        hosted_version(cast, cast.builder_team, cast.builder, name, model)
        for name in ("agree-a", "agree-b")
    ]
    start_phase_now(cast.shared_task, "break")
    cast.shared_task.refresh_from_db()
    return cast, systems
