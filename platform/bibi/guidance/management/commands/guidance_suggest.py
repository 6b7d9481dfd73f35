"""``manage.py guidance_suggest TASK_SLUG --top N [--out FILE.jsonl]``: verified suggestions in
bulk for the task's top-N originals by boundary rank.

Runs in this process (the models load here, as for ``manage.py score``): the originals are
grouped by their guide (the ready hosted system with the highest λmax percentile on them, as
``POST .../guidance/suggest/`` picks it) and each group goes through ``fim_engine.suggest_many``
once, its forward passes batched per system (a sentence pair's edits go into the segment the
task lets breakers edit; its report names them as ``fim_engine`` does). One JSON line per original: its id, rank,
boundary score, the guide's system id, and the report (systems named by system id; what a
suggestion does to each, and whether it breaks it given the label the suggestion means; a probe
means none, and its ``breaks`` are null).

On a span task (QA-SRL) each item goes through the guidance service's span suggestions in
turn, and its report is the API's answer for it (``bibi.guidance.span_guidance``): answer-keeping
edits with their breaks, answer-moving ones ``label_unverified`` with no break claimed.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

import scoring
from bibi.guidance.kinds import suggestion_claim
from bibi.guidance.ranking import RankedOriginal, boundary_ranking, guide_order, ranking_systems
from bibi.guidance.span_guidance import span_answer, span_request
from bibi.sharedtasks.models import SharedTask
from bibi.systems.models import System
from bibi.tasktypes import LABEL, SPAN, Parts


class Command(BaseCommand):
    help = "Verified suggestions for the top-N starter originals by boundary rank (JSON Lines)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("task_slug")
        parser.add_argument("--top", type=int, default=100, help="How many originals (rank order).")
        parser.add_argument("--out", type=Path, help="The JSON Lines file (default: stdout).")
        parser.add_argument("--top-k", type=int, default=5, help="Suggestions per kind of edit.")
        parser.add_argument("--words", type=int, default=3, help="Words edited per original.")

    def handle(self, *args: Any, task_slug: str, top: int, out: Path | None, **options: Any):
        shared_task = SharedTask.objects.filter(slug=task_slug).first()
        if shared_task is None:
            raise CommandError(f"No shared task has the slug '{task_slug}'.")
        if top < 1 or not 1 <= options["top_k"] <= 20 or not 1 <= options["words"] <= 10:
            raise CommandError("--top must be at least 1, --top-k 1 to 20, --words 1 to 10.")
        ranking = [o for o in boundary_ranking(shared_task, with_words=False) if o.systems]
        if not ranking:
            raise CommandError("No ready hosted system has λmax on the starter set yet.")
        systems = {s.id: s for s in ranking_systems(shared_task=shared_task)}
        make = LINES.of(shared_task.kind)
        lines = make(shared_task, ranking[:top], systems, options["top_k"], options["words"])
        stream = out.open("w", encoding="utf-8") if out else sys.stdout
        try:
            for rank in sorted(lines):
                stream.write(json.dumps(lines[rank], ensure_ascii=False) + "\n")
        finally:
            if out:
                stream.close()
        if out:
            count = sum(len(line["report"]["suggestions"]) for line in lines.values())
            self.stdout.write(f"{len(lines)} originals, {count} verified suggestions: {out}")


def _guide(original: RankedOriginal) -> int:
    """The original's guide: as ``POST .../guidance/suggest/`` picks it."""
    return guide_order({view.system_id: view.percentile for view in original.systems})[0]


def _guide_first(guide_id: int, systems: dict[int, System]) -> list[int]:
    return [guide_id, *(sid for sid in systems if sid != guide_id)]


def _label_lines(
    shared_task: SharedTask,
    ranking: list[RankedOriginal],
    systems: dict[int, System],
    top_k: int,
    words: int,
) -> dict[int, dict[str, Any]]:
    """Each label original's line by rank, its guide's group through ``suggest_many`` once."""
    # Imported here: suggestions load models, and with them torch.
    from bibi.guidance.compute import guidance_compute_many
    from bibi.systems.errors import ValidationFailed

    kind = shared_task.kind
    groups: dict[int, list[RankedOriginal]] = defaultdict(list)
    for original in ranking:
        groups[_guide(original)].append(original)
    lines: dict[int, dict[str, Any]] = {}
    for guide_id, originals in groups.items():
        order = _guide_first(guide_id, systems)
        try:
            reports = guidance_compute_many(
                version_ids=[systems[sid].active_version_id or 0 for sid in order],
                originals=[kind.model_input(kind.item(o.example)) for o in originals],
                top_k=top_k,
                words=words,
                # A sentence pair's edits go into the segment(s) the task lets breakers edit.
                **kind.model_options(shared_task),
            )
        except ValidationFailed as failed:
            raise CommandError(f"A system could not run: {failed.detail}") from None
        names = {str(systems[sid].active_version_id): str(sid) for sid in order}
        for original, report in zip(originals, reports, strict=True):
            lines[original.rank] = _line(shared_task, original, guide_id, report, names)
    return lines


def _span_lines(
    shared_task: SharedTask,
    ranking: list[RankedOriginal],
    systems: dict[int, System],
    top_k: int,
    words: int,
) -> dict[int, dict[str, Any]]:
    """Each span item's line by rank: the guidance service's span suggestions (as the API
    answers them, systems named by id), one item at a time; ``words`` does not apply."""
    from bibi.guidance.compute import span_guidance_compute

    lines: dict[int, dict[str, Any]] = {}
    for original in ranking:
        example, guide_id = original.example, _guide(original)
        order = _guide_first(guide_id, systems)
        span = span_request(
            shared_task,
            example,
            variant=None,
            variant_label=None,
            given_answers=None,
            question=None,
        )
        payload = span_guidance_compute(
            version_ids=[systems[sid].active_version_id or 0 for sid in order],
            sentence=example.text,
            variant=None,
            top_k=top_k,
            **span,
        )
        if "error" in payload:
            raise CommandError(f"A system could not run: {payload['error']}")
        names = {str(systems[sid].active_version_id): (sid, str(sid)) for sid in order}
        report = span_answer(
            payload, example=example, shared_task=shared_task, names=names, per_system=True
        )
        lines[original.rank] = {
            "original_id": example.external_id,
            "rank": original.rank,
            "boundary_score": original.boundary_score,
            "guide": guide_id,
            "report": report,
        }
    return lines


def _line(
    shared_task: SharedTask,
    original: RankedOriginal,
    guide_id: int,
    report: dict[str, Any],
    names: dict[str, str],
) -> dict[str, Any]:
    """One original's line, systems named by id and each outcome judged by the 2017 rule."""
    gold = original.example.label
    predictions = {names[key]: value for key, value in report["predictions"].items()}
    for suggestion in report["suggestions"]:
        # A probe claims no label (nor that it keeps one), so no break either (edits.claims).
        claim = suggestion_claim(suggestion, gold, shared_task.labels)
        intended = claim.label
        suggestion["variant_label"] = intended
        if claim.probe:
            suggestion["keeps_label"] = None
        outcomes = {names[key]: value for key, value in suggestion["outcomes"].items()}
        for system_id, outcome in outcomes.items():
            outcome["breaks"] = (
                None
                if intended is None
                else scoring.pair_breaks(
                    gold, intended, predictions[system_id]["label"], outcome["label"]
                )
            )
        suggestion["outcomes"] = outcomes
    report["predictions"] = predictions
    report["guide"] = str(guide_id)
    return {
        "original_id": original.example.external_id,
        "rank": original.rank,
        "boundary_score": original.boundary_score,
        "guide": guide_id,
        "report": report,
    }


# The lines of each kind of answer: verified suggestions with the labels they claim, or a
# span task's suggestions with their answers.
LINES: Parts[Callable[..., dict[int, dict[str, Any]]]] = Parts("suggestion lines")
LINES.register(LABEL, _label_lines)
LINES.register(SPAN, _span_lines)
