"""Build the demo's sentence-pair (NLI) task beside the others, through the users' services.

Organizer: a sentence-pair task (premise + hypothesis -> entailment, neutral, contradiction;
breakers edit the hypothesis), its phases, and balanced slices of the shared nli-cad files
(``pair_data``) imported in SNLI's own layout. Builders: MiniLM fine-tuned on the training
pairs and a bag-of-ngrams pair model (both hosted, validated like any upload), and the
``word-overlap`` heuristic (self-reported: entailment when every word of the hypothesis is in
the premise, contradiction when the hypothesis negates, neutral otherwise). Breakers: the
hand-written pairs of ``fixtures/demo-nli/pairs.csv`` and, where it finds candidates, the
baseline breaker. Then the task is scored and published as the others are.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction

from bibi.demo import builder
from bibi.demo.builder import DemoError, Say
from bibi.demo.models import PAIR_TRAINING, pair_model_train
from bibi.demo.pair_data import LABELS, PairDemoData
from bibi.evaluation.models import Snapshot
from bibi.files.csv_out import csv_writer
from bibi.pairs.selectors import pair_items
from bibi.pairs.services import PairSetRejected
from bibi.sharedtasks import importing
from bibi.sharedtasks.models import Example, SharedTask, Team
from bibi.systems import predictions as system_predictions
from bibi.systems import services as system_services
from bibi.systems.models import System
from bibi.tasktypes import SENTENCE_PAIRS

PAIR_SLUG = "demo-nli"
PAIRS_FILE = Path(settings.BASE_DIR) / "fixtures" / "demo-nli" / "pairs.csv"
HEURISTIC = "word-overlap"
NEGATIONS = frozenset({"not", "no", "never", "nobody", "nothing", "none", "n't"})
BASELINE_PAIR_PAIRS = 30
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?|n't")


def pair_task() -> SharedTask | None:
    return SharedTask.objects.filter(slug=PAIR_SLUG).first()


def pair_digest(data: PairDemoData) -> str:
    """What the task is built from: the slices, the hand-written pairs and the models'
    training settings (the same digest, the same task)."""
    sha = hashlib.sha256(data.digest().encode())
    sha.update(PAIRS_FILE.read_bytes())
    sha.update(json.dumps(PAIR_TRAINING, sort_keys=True).encode())
    return sha.hexdigest()


def pair_reset() -> None:
    SharedTask.objects.filter(slug=PAIR_SLUG).delete()


def word_overlap(premise: str, hypothesis: str) -> str:
    """The heuristic's label: contradiction when the hypothesis negates, entailment when every
    one of its words is in the premise, neutral otherwise (it reads no meaning, and says so in
    its name)."""
    hypothesis_words = _WORD.findall(hypothesis.lower())
    if NEGATIONS.intersection(hypothesis_words):
        return "contradiction"
    if set(hypothesis_words) <= set(_WORD.findall(premise.lower())):
        return "entailment"
    return "neutral"


def _csv(header: list[str], rows: list[list[str]]) -> bytes:
    buffer = io.StringIO()
    # Read back by the example importer, never downloaded: written as it is.
    writer = csv_writer(buffer, neutralize=False, lineterminator="\n")
    writer.writerows([header, *rows])
    return buffer.getvalue().encode()


def examples_import(
    *, shared_task: SharedTask, organizer: Any, data: PairDemoData, say: Say
) -> None:
    """The three slices, imported as SNLI files (``sentence1``, ``sentence2``, ``gold_label``;
    no ids: the line numbers are)."""
    for split, piece in data.slices.items():
        report = importing.examples_import(
            shared_task=shared_task,
            split=split,
            actor=organizer,
            data=piece.data(),
            filename=piece.filename,
        )
        say(f"  {split}: {report.created} pairs of {piece.source.name} ({piece.counts()})")


def heuristic_dev_submit(*, team: Team, builder_user: Any, say: Say) -> System:
    """The self-reported heuristic system and its blind-dev labels."""
    system = system_services.system_create(
        team=team, actor=builder_user, name=HEURISTIC, kind=System.Kind.SELF_REPORTED
    )
    examples = Example.objects.filter(
        dataset__shared_task=team.shared_task, dataset__split="blind_dev"
    ).order_by("position")
    rows = [[e.external_id, word_overlap(e.text, e.text_b)] for e in examples]
    version = system_predictions.system_predictions_upload(
        system=system,
        actor=builder_user,
        data=_csv(["id", "label"], rows),
        filename="word-overlap-dev.csv",
        source="blind_dev",
    )
    say(f"  {HEURISTIC} (self-reported heuristic): {builder.dev_figures(version)}")
    return system


def heuristic_pairs_submit(*, system: System, builder_user: Any, say: Say) -> None:
    """The heuristic's labels on every pair item, in the pair-prediction window."""
    items = pair_items(shared_task=system.team.shared_task)
    rows = [
        [premise, hypothesis, word_overlap(premise, hypothesis)] for premise, hypothesis in items
    ]
    system_predictions.system_predictions_upload(
        system=system,
        actor=builder_user,
        data=_csv(["premise", "hypothesis", "label"], rows),
        filename="word-overlap-pairs.csv",
        source="pairs",
    )
    say(f"  {HEURISTIC}: labels on the {len(items)} pair items uploaded")


def _task_create(organizer: Any, data: PairDemoData, say: Say) -> SharedTask:
    say(f"Creating the task '{PAIR_SLUG}' from nli-cad ({data.directory})")
    with transaction.atomic():
        shared_task = builder.task_with_phases_create(
            organizer=organizer,
            slug=PAIR_SLUG,
            name="Demo: sentence pairs (NLI), Build It Break It",
            description=(
                "A sample sentence-pair task built by `make demo` from SNLI pairs (the "
                "nli-cad files): a premise and a hypothesis, labelled entailment, neutral or "
                "contradiction; breakers edit the hypothesis. Systems: MiniLM fine-tuned on "
                "the training pairs, a bag-of-ngrams pair model and the "
                f"'{HEURISTIC}' heuristic (self-reported). Breakers: hand-written pairs."
            ),
            task_type=SENTENCE_PAIRS.key,
            labels=list(LABELS),
            editable_text="second",
        )
        examples_import(shared_task=shared_task, organizer=organizer, data=data, say=say)
    return shared_task


def pair_demo_build(
    *, users: dict[str, Any], data: PairDemoData, say: Say = print, progress: bool = True
) -> Snapshot:
    """Build, score and publish the sentence-pair task from ``data``; the published snapshot.
    Raises DemoError on a failed step, after removing the half-built task."""
    organizer = users["organizer"]
    try:
        shared_task = _task_create(organizer, data, say)
        say("Builders: MiniLM and a bag of ngrams on sentence pairs, and a heuristic")
        trained = builder.models_train(
            data=data,
            say=say,
            progress=progress,
            architectures=tuple(PAIR_TRAINING),
            train=pair_model_train,
        )
        team = builder.systems_upload(
            shared_task=shared_task, builder=users["builder"], trained=trained, say=say
        )
        heuristic = heuristic_dev_submit(team=team, builder_user=users["builder"], say=say)
        return builder.break_and_publish(
            shared_task=shared_task,
            users=users,
            pairs=PAIRS_FILE,
            data_name="nli-cad",
            heuristic_pairs=lambda: heuristic_pairs_submit(
                system=heuristic, builder_user=users["builder"], say=say
            ),
            baseline=lambda: builder.baseline_pairs_try(
                shared_task=shared_task, say=say, n=BASELINE_PAIR_PAIRS
            ),
            say=say,
        )
    except (ValidationError, PermissionDenied, PairSetRejected) as error:
        pair_reset()
        raise DemoError(
            f"The sentence-pair task could not be built: {builder.problems(error)}"
        ) from error
    except BaseException:
        pair_reset()
        raise
