"""A task whose hosted systems have known geometry, for the guidance tests.

The systems are the bag of words of ``tests/fim_engine/conftest.py``: the first embedding
axis is sentiment (positive words at +2, negative ones at -2, the rest near 0) and the
classifier reads that axis only, so a sentence whose sentiment words cancel out lies on the
decision boundary and one made of positive words lies far from it. ``contrarian`` is the same
model with its output negated: it disagrees with the others on every original.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from django.contrib.auth import get_user_model

from bibi.sharedtasks import services as task_services
from bibi.sharedtasks.models import Example, Team
from bibi.systems.models import System

from ...fim_engine.conftest import build_sentiment_bow
from ..conftest import Cast, build_cast
from ..evaluation.conftest import hosted_version
from ..pairs.conftest import start_phase_now

# (id, text, gold label); "on" lies on the boundary of every system, "far" far from it.
GEOMETRY_STARTER = [
    ("far-pos", "good great fun", "positive"),
    ("on", "the film is good but bad", "negative"),
    ("mild-pos", "the film is good", "positive"),
    ("far-neg", "bad dull awful", "negative"),
    ("near", "a good film and a dull story", "positive"),
    ("mild-neg", "the movie was boring", "negative"),
]


@dataclass
class GeometryTask:
    cast: Cast
    melbourne: Team
    melbourne_builder: object
    strawman_bow: System  # the Strawman team's copy of the bag of words
    melbourne_bow: System  # Melbourne's
    model_dir: Path

    @property
    def shared_task(self):
        return self.cast.shared_task


def sentiment_bow(out: Path, *, contrarian: bool = False) -> Path:
    """The bag of words of known geometry; ``contrarian`` negates its output layer."""
    path = build_sentiment_bow(out)
    if contrarian:
        from safetensors.torch import load_file, save_file

        weights = load_file(str(path / "model.safetensors"))
        weights["output.weight"] = -weights["output.weight"]
        save_file(weights, str(path / "model.safetensors"), metadata={"format": "pt"})
    return path


def replace_starter(cast: Cast, rows: list[tuple[str, str, str]]) -> None:
    cast.starter.examples.all().delete()
    Example.objects.bulk_create(
        Example(dataset=cast.starter, external_id=eid, text=text, label=label, position=i)
        for i, (eid, text, label) in enumerate(rows)
    )


def build_geometry_task(tmp_path: Path) -> GeometryTask:
    """The cast's task in its break phase, with the geometry starter set and two ready hosted
    systems of two builder teams, both the bag of words of known geometry."""
    cast = build_cast(current_phase="build")
    replace_starter(cast, GEOMETRY_STARTER)
    builder = get_user_model().objects.create_user("mel", password="pw-mel-123")
    melbourne = task_services.team_create(
        shared_task=cast.shared_task, owner=builder, kind="builder", name="Melbourne"
    )
    model_dir = sentiment_bow(tmp_path / "sentiment-bow")
    first = hosted_version(cast, cast.builder_team, cast.builder, "bow-a", model_dir)
    second = hosted_version(cast, melbourne, builder, "bow-b", model_dir)
    start_phase_now(cast.shared_task, "break")
    cast.shared_task.refresh_from_db()
    return GeometryTask(cast, melbourne, builder, first, second, model_dir)


def many_pairs(task: GeometryTask, count: int) -> None:
    """``count`` pairs of the breaker team (one word added to an original each), whose cells
    no system has yet; then the break phase is over."""
    from bibi.pairs import services as pair_services
    from bibi.tasktypes.rules import PairInput

    cast = task.cast
    pair_services.pair_set_submit(
        team=cast.breaker_team,
        user=cast.breaker,
        pairs=[
            PairInput(
                row=n + 1,
                original_id="mild-pos",
                variant_text=f"the film is good take{n}",
                variant_label="positive",
            )
            for n in range(count)
        ],
    )
    start_phase_now(task.shared_task, "contest")


@contextmanager
def an_interactive_worker(tmp_path: Path, redis_url: str) -> Iterator[Any]:
    """A real worker process on this test's broker and result backend (``redis_url``),
    reading a queue of the test's own that the ``interactive`` route sends to: the session's
    worker, which reads "interactive" too, never takes these messages, so this one answers
    them all."""
    from ...conftest import sent_to_a_queue_of_its_own
    from ..evaluation.conftest import Stack

    stack = Stack(tmp_path, SimpleNamespace(url=redis_url), {})
    try:
        with sent_to_a_queue_of_its_own("interactive") as queue:
            yield stack.start("interactive", queue)
    finally:
        stack.close()


def assert_claims_nothing(suggestion: dict[str, Any]) -> None:
    """A probe, as any surface shows it: no label kept or changed, none meant, no break."""
    assert suggestion["probe"] is True
    assert suggestion["keeps_label"] is None, suggestion
    assert suggestion.get("variant_label") is None and not suggestion.get("label_unverified")
    assert (
        "meant to" not in suggestion["rationale"] and "claims no label" in suggestion["rationale"]
    )
    assert suggestion.get("breaks") is None
