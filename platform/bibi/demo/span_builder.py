"""Build the demo's QA-SRL span task beside the sentiment ones, through the users' services.

Organizer: a span-extraction task, its phases, and slices of the shared wiki1 files
(``span_data``) as train, blind dev and starter sets. Builders: the fine-tuned MiniLM span
model (hosted, validated like any upload) and a weaker self-reported baseline, the
``opening-words`` heuristic (every question answered with the sentence's first words: it reads
neither the question nor the predicate, and says so in its name). Breakers: the hand-written
pairs of ``fixtures/demo-qasrl/pairs.jsonl`` and, where the baseline breaker takes span tasks,
its pairs. Then the task is scored and published as the sentiment task is.
"""

from __future__ import annotations

import hashlib
import io
import json
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction

from bibi.demo import builder
from bibi.demo.builder import DemoError, Say
from bibi.demo.models import SPAN_TRAINING, span_model_train
from bibi.demo.span_data import SpanDemoData
from bibi.evaluation.models import Snapshot
from bibi.files.csv_out import csv_writer
from bibi.pairs.selectors import pair_items
from bibi.pairs.services import PairSetRejected
from bibi.sharedtasks import importing
from bibi.sharedtasks.models import Example, SharedTask, Team
from bibi.systems import predictions as system_predictions
from bibi.systems import services as system_services
from bibi.systems.models import System
from bibi.tasktypes import SPAN_EXTRACTION

SPAN_SLUG = "demo-qasrl"
PAIRS_FILE = Path(settings.BASE_DIR) / "fixtures" / "demo-qasrl" / "pairs.jsonl"
HEURISTIC = "opening-words"
# The heuristic's answer: at most this many of the sentence's first tokens, before any
# punctuation token.
HEURISTIC_WORDS = 3
BASELINE_SPAN_PAIRS = 30


def span_task() -> SharedTask | None:
    return SharedTask.objects.filter(slug=SPAN_SLUG).first()


def span_digest(data: SpanDemoData) -> str:
    """What the span task is built from: the slices, the hand-written pairs and the span
    model's training settings (the same digest, the same task)."""
    sha = hashlib.sha256(data.digest().encode())
    sha.update(PAIRS_FILE.read_bytes())
    sha.update(json.dumps(SPAN_TRAINING, sort_keys=True).encode())
    return sha.hexdigest()


def span_reset() -> None:
    SharedTask.objects.filter(slug=SPAN_SLUG).delete()


def opening_words(sentence: str) -> str:
    """The heuristic's answer: the sentence's first ``HEURISTIC_WORDS`` whitespace tokens,
    stopping before the first token without a letter or digit ("," "." "``")."""
    words: list[str] = []
    for token in sentence.split()[:HEURISTIC_WORDS]:
        if not any(character.isalnum() for character in token):
            break
        words.append(token)
    return " ".join(words) or sentence.split()[0]


def _answers_csv(header: list[str], rows: list[list[str]]) -> bytes:
    buffer = io.StringIO()
    # Read back by the example importer, never downloaded: written as it is.
    writer = csv_writer(buffer, neutralize=False, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue().encode()


def examples_import(
    *, shared_task: SharedTask, organizer: Any, data: SpanDemoData, say: Say
) -> None:
    """The three slices, imported as ``.qa`` files; answers that are not spans of their
    sentence (a few curly quotes in the shared data) are dropped and counted."""
    for split, piece in data.slices.items():
        report = importing.examples_import(
            shared_task=shared_task,
            split=split,
            actor=organizer,
            data=piece.data(),
            filename=piece.filename,
            drop_unmatched=True,
        )
        say(
            f"  {split}: {report.created} questions on {piece.sentences} sentences of "
            f"{piece.source.name}"
        )


def heuristic_dev_submit(*, team: Team, builder_user: Any, say: Say) -> System:
    """The self-reported heuristic system and its blind-dev answers."""
    system = system_services.system_create(
        team=team, actor=builder_user, name=HEURISTIC, kind=System.Kind.SELF_REPORTED
    )
    examples = Example.objects.filter(
        dataset__shared_task=team.shared_task, dataset__split="blind_dev"
    ).order_by("position")
    rows = [[example.external_id, opening_words(example.text)] for example in examples]
    version = system_predictions.system_predictions_upload(
        system=system,
        actor=builder_user,
        data=_answers_csv(["id", "answer"], rows),
        filename="opening-words-dev.csv",
        source="blind_dev",
    )
    say(f"  {HEURISTIC} (self-reported heuristic): {builder.dev_figures(version)}")
    return system


def heuristic_pairs_submit(*, system: System, builder_user: Any, say: Say) -> None:
    """The heuristic's answers on every pair item, in the pair-prediction window."""
    items = pair_items(shared_task=system.team.shared_task)
    rows = [[text, question, opening_words(text)] for text, question in items]
    system_predictions.system_predictions_upload(
        system=system,
        actor=builder_user,
        data=_answers_csv(["text", "question", "answer"], rows),
        filename="opening-words-pairs.csv",
        source="pairs",
    )
    say(f"  {HEURISTIC}: answers on the {len(items)} pair items uploaded")


def span_demo_build(
    *, users: dict[str, Any], data: SpanDemoData, say: Say = print, progress: bool = True
) -> Snapshot:
    """Build, score and publish the span task from ``data``; the published snapshot. Raises
    DemoError on a failed step, after removing the half-built task."""
    organizer = users["organizer"]
    try:
        say(f"Creating the task '{SPAN_SLUG}' from QA-SRL ({data.directory})")
        with transaction.atomic():
            shared_task = builder.task_with_phases_create(
                organizer=organizer,
                slug=SPAN_SLUG,
                name="Demo: QA-SRL spans, Build It Break It",
                description=(
                    "A sample span task built by `make demo` from slices of the QA-SRL "
                    "wiki1 data: a sentence and a question about one of its verbs, answered "
                    "by a span of the sentence. Systems: a fine-tuned MiniLM span model and "
                    f"the '{HEURISTIC}' heuristic (self-reported: it answers every question "
                    "with the sentence's first words). Breakers: hand-written pairs and the "
                    "automatic baseline breaker."
                ),
                task_type=SPAN_EXTRACTION.key,
            )
            examples_import(shared_task=shared_task, organizer=organizer, data=data, say=say)
        say("Builders: a fine-tuned MiniLM span model and a heuristic")
        started = time.monotonic()
        model = span_model_train(data, progress=progress)
        how = "cached" if model.cached else f"trained in {time.monotonic() - started:.0f} s"
        scores = model.dev_scores
        say(
            f"  {model.architecture}: {how}; on the {model.dev_questions} blind-dev questions: "
            f"exact {scores['exact']:.1%}, token F1 >= 0.5 {scores['token_f1']:.1%}, 2017 "
            f"overlap {scores['overlap_2017']:.1%} (over the longer span "
            f"{scores.get('overlap_longer', 0.0):.1%}), mean token F1 "
            f"{scores['mean_token_f1']:.2f}"
        )
        team = builder.systems_upload(
            shared_task=shared_task, builder=users["builder"], trained=[model], say=say
        )
        heuristic = heuristic_dev_submit(team=team, builder_user=users["builder"], say=say)
        return builder.break_and_publish(
            shared_task=shared_task,
            users=users,
            pairs=PAIRS_FILE,
            data_name="QA-SRL",
            heuristic_pairs=lambda: heuristic_pairs_submit(
                system=heuristic, builder_user=users["builder"], say=say
            ),
            baseline=lambda: builder.baseline_pairs_try(
                shared_task=shared_task, say=say, n=BASELINE_SPAN_PAIRS
            ),
            say=say,
        )
    except (ValidationError, PermissionDenied, PairSetRejected) as error:
        span_reset()
        raise DemoError(f"The span task could not be built: {builder.problems(error)}") from error
    except BaseException:
        span_reset()
        raise
