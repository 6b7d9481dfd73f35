"""A hosted span system's outputs on (sentence, question) items, as prediction cells.

Worker-only (it runs models through ``runner``): imported by ``validation`` (the blind dev and
starter sets of a span task) and by ``bibi.evaluation.compute`` (span cells of pair items),
never by a module the web process loads.

A span cell (``Prediction``) holds the sentence as ``text``, the question, the answer span
the model gave (``answer_start``/``answer_end``, character offsets into the sentence, end
exclusive, and ``answer_text``), ``label`` '' and no probabilities; with λmax (the top
eigenvalue of the summed Fisher metric of the start and end distributions,
:mod:`fim_engine.spans`), ``hints`` (``[word, norm]`` of each sentence word's block of the top
eigenvector) and ``leverage`` (``[word, KL]`` of deleting each sentence word) for starter and
pair items. Its key is ``item_key((sentence, question))``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fim_engine
from bibi.sharedtasks.models import Dataset, Example
from bibi.systems.hosted_runs import HostedRun
from bibi.systems.models import Prediction, SystemVersion
from bibi.systems.runner import model_call, span_input_digests, version_span_system
from bibi.systems.selectors import dataset_examples, span_dev_scores
from bibi.tasktypes.items import item_key


@dataclass(frozen=True)
class SpanOutput:
    """What a span model said about one item: its answer span, what it saw, and (starter and
    pair items) λmax with word hints and leverage."""

    start: int
    end: int
    text: str
    truncated: bool
    input_sha256: str
    lambda_max: float | None = None
    hints: list[list[Any]] | None = None
    leverage: list[list[Any]] | None = None

    def prediction(
        self,
        *,
        version: SystemVersion,
        source: str,
        sentence: str,
        question: str,
        example: Example | None = None,
    ) -> Prediction:
        """The cell of this output (not saved)."""
        return Prediction(
            system_version=version,
            source=source,
            example=example,
            text=sentence,
            text_sha256=item_key((sentence, question)),
            label="",
            probabilities=None,
            question=question,
            answer_start=self.start,
            answer_end=self.end,
            answer_text=self.text,
            lambda_max=self.lambda_max,
            hints=self.hints,
            leverage=self.leverage,
            truncated=self.truncated,
            input_sha256=self.input_sha256,
            # Span models always run in fp32 (runner.version_span_system).
            precision="fp32",
        )


def span_outputs(
    system: fim_engine.SpanSystem,
    sentences: Sequence[str],
    questions: Sequence[str],
    *,
    fisher: bool,
) -> list[SpanOutput]:
    """The system's answer to each (sentence, question), in input order, with λmax, hints and
    leverage when ``fisher``.

    Raises ``ValidationFailed`` (``runner.model_call``) when the model raises or gives NaN or
    infinite scores, λmax, hints or leverage.
    """
    sentences, questions = list(sentences), list(questions)
    if not sentences:
        return []
    answers = model_call(system.predict, questions, sentences)
    digests = model_call(span_input_digests, system, questions, sentences)
    if not fisher:
        return [
            SpanOutput(a.start, a.end, a.text, a.truncated, digest)
            for a, digest in zip(answers, digests, strict=True)
        ]
    results = model_call(system.fisher, questions, sentences)
    return [
        SpanOutput(
            a.start,
            a.end,
            a.text,
            a.truncated,
            digest,
            lambda_max=r.lambda_max,
            hints=[[word, score] for word, score in r.hints],
            leverage=[[word, score] for word, score in r.leverage],
        )
        for a, r, digest in zip(answers, results, digests, strict=True)
    ]


def span_version_run(version: SystemVersion, root: Path) -> HostedRun:
    """Validate a span version's model directory ``root``: its blind-dev cells and starter
    cells (with λmax), and its dev scores: answer accuracy, mean token F1, items scored
    (``selectors.span_dev_scores``)."""
    shared_task = version.system.shared_task
    system = version_span_system(version, unpacked=root)
    rows: list[Prediction] = []
    for source, split in (
        (Prediction.Source.BLIND_DEV, Dataset.Split.BLIND_DEV),
        (Prediction.Source.STARTER, Dataset.Split.STARTER),
    ):
        examples = dataset_examples(shared_task, split)
        outputs = span_outputs(
            system,
            [e.text for e in examples],
            [e.question for e in examples],
            fisher=source == Prediction.Source.STARTER,
        )
        rows += [
            output.prediction(
                version=version, source=source, sentence=e.text, question=e.question, example=e
            )
            for e, output in zip(examples, outputs, strict=True)
        ]
    dev = [row for row in rows if row.source == Prediction.Source.BLIND_DEV]
    # The cells stored are one per key (QA-SRL asks one question of one sentence for two
    # predicates of a verb at times); the dev figures count each once, against the union of
    # its examples' gold answers, as every other path does (selectors.span_dev_scores).
    distinct: dict[tuple[str, str], Prediction] = {}
    for row in rows:
        distinct.setdefault((row.source, row.text_sha256), row)
    figures = span_dev_scores(shared_task=shared_task, cells=dev)
    return HostedRun(
        rows=list(distinct.values()),
        model_format="transformers",
        accuracy=figures.accuracy,
        count=figures.count,
        token_f1=figures.token_f1,
        answer_mode=figures.answer_mode,
        answer_threshold=figures.answer_threshold,
    )
