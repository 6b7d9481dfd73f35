"""``manage.py baseline_breaker TASK_SLUG --team NAME [--n 100] [--seed 0] [--user USERNAME]``.

Builds minimal pairs around the starter originals nearest the hosted systems' boundaries and
submits them as the team's new pair set (``bibi.baseline.breaker``). Runs in this process:
the hosted models load here.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from bibi.baseline.breaker import BASELINE_KINDS
from bibi.files import FileRejected
from bibi.sharedtasks.models import SharedTask


class Command(BaseCommand):
    help = (
        "Build and submit a baseline breaker's pair set: minimal pairs around the originals "
        "nearest the hosted systems' decision boundaries."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        from bibi.baseline.breaker import DEFAULT_PAIRS

        parser.add_argument("task_slug")
        parser.add_argument(
            "--team",
            required=True,
            help="The breaker team's name; created (owned by the baseline account) if new.",
        )
        parser.add_argument(
            "--n", type=int, default=DEFAULT_PAIRS, help=f"Pairs to submit ({DEFAULT_PAIRS})."
        )
        parser.add_argument("--seed", type=int, default=0, help="Decides which typos are made (0).")
        parser.add_argument("--user", default="", help="Submit as this member of an existing team.")

    def handle(
        self, *args: Any, task_slug: str, team: str, n: int, seed: int, user: str, **options: Any
    ) -> None:
        # Imported here: the breaker loads models, and with them torch.
        from bibi.baseline.breaker import baseline_breaker_run

        shared_task = SharedTask.objects.filter(slug=task_slug).first()
        if shared_task is None:
            raise CommandError(f"No shared task has the slug '{task_slug}'.")
        submitter = None
        if user:
            submitter = get_user_model().objects.filter(username=user).first()
            if submitter is None:
                raise CommandError(f"No user is called '{user}'.")
        try:
            result = baseline_breaker_run(
                shared_task, team_name=team, n=n, user=submitter, seed=seed
            )
        except FileRejected as rejected:
            problems = "; ".join(f"row {e.line}: {e.reason}" for e in rejected.errors[:5])
            raise CommandError(f"The pairs service refused the set: {problems}") from None
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from None

        submission = result.submission
        sources = Counter(pair.source for pair in result.pairs)
        self.stdout.write(
            f"Submitted pair set {result.pair_set.id} for the team '{result.team.name}' "
            f"({'created' if result.team_created else 'existing'}): {len(result.pairs)} pairs "
            f"around {len({p.original_id for p in result.pairs})} of the {result.originals} "
            f"originals nearest the boundary ({', '.join(f'{s} {c}' for s, c in sorted(sources.items()))})."
        )
        self.stdout.write(
            f"{result.breaking} of them broke at least one of the {len(result.systems)} ready "
            f"hosted systems ({', '.join(result.systems)}) when they were made; "
            f"{result.candidates} candidates passed the minimal-pair checks, {result.refused} "
            "did not."
        )
        if result.unverified:
            change = BASELINE_KINDS.of(shared_task.kind).unverified
            self.stdout.write(
                f"{result.unverified} pairs {change} and are marked label unverified: they "
                "count only once validated, and with validation off they are left out of the "
                "scored set."
            )
        for warning in submission.warnings:
            self.stdout.write(f"Note: {warning.reason}")
