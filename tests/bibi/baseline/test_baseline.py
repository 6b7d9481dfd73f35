"""The automatic baseline breaker (``bibi.baseline``, ``manage.py baseline_breaker``).

The fixture task is the cast's, its starter set grown with the demo's starter sentences, and
one deliberately weak hosted system: a bag-of-ngrams trained here for one epoch on the demo's
training sentences. Whether a pair breaks it is judged here again, by loading the same model
directory and applying the break rule by hand.
"""

from __future__ import annotations

import csv
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

import fim_engine
from bibi.baseline.breaker import BOT_USERNAME, baseline_breaker_run
from bibi.pairs.models import Pair, PairSet
from bibi.sharedtasks.models import Example, Team
from bibi.tasktypes import TEXT_CLASSIFICATION
from bibi.tasktypes.rules import PairInput, PairRules, StarterExample
from edits.claims import changed_label
from fim_engine.datasets import read_labelled
from fim_engine.training import train_system

from ..conftest import build_cast
from ..evaluation.conftest import hosted_version
from ..pairs.conftest import start_phase_now

pytestmark = [pytest.mark.embedded]

DEMO = Path(__file__).resolve().parents[3] / "fixtures" / "demo"
KEEPS = {"synonym", "name", "typo"}
CHANGES = {"antonym", "negation"}


@pytest.fixture(scope="session")
def weak_bow(tmp_path_factory) -> Path:
    """A bag-of-ngrams that saw the demo's 240 training sentences once: weak on purpose."""
    out = tmp_path_factory.mktemp("weak-bow")
    train = read_labelled(DEMO / "train.tsv")
    dev = read_labelled(DEMO / "blind_dev.tsv")
    train_system("bow", train, dev, out, epochs=1, seed=0, progress=False)
    return out


def grow_starter(cast) -> None:
    """Add the demo's starter sentences (those the cast's set does not already hold)."""
    have = set(cast.starter.examples.values_list("text", flat=True))
    with (DEMO / "starter.tsv").open(encoding="utf-8") as handle:
        rows = [row for row in csv.DictReader(handle, delimiter="\t") if row["text"] not in have]
    start = cast.starter.examples.count()
    Example.objects.bulk_create(
        Example(
            dataset=cast.starter, external_id=row["id"], text=row["text"], label=row["label"],
            position=start + i,
        )
        for i, row in enumerate(rows)
    )  # fmt: skip


def ready_task(weak_bow: Path):
    """The cast with the grown starter set and the weak hosted bow, in its break phase."""
    cast = build_cast(current_phase="build")
    grow_starter(cast)
    system = hosted_version(cast, cast.builder_team, cast.builder, "weak bow", weak_bow)
    start_phase_now(cast.shared_task, "break")
    return cast, system


def test_it_submits_checked_pairs_with_labels_by_construction_that_break_the_weak_system(
    db, weak_bow
):
    cast, _ = ready_task(weak_bow)
    shared_task = cast.shared_task
    result = baseline_breaker_run(shared_task, team_name="Strawman breaker", n=30)

    # A team of its own, owned by an account nobody can log in as.
    team = Team.objects.get(shared_task=shared_task, name="Strawman breaker")
    assert result.team_created and result.team == team and team.kind == "breaker"
    bot = get_user_model().objects.get(username=BOT_USERNAME)
    assert team.memberships.filter(user=bot).exists()
    assert not bot.has_usable_password()

    pair_set = PairSet.objects.get(team=team)
    assert pair_set.source == "baseline" and pair_set.status == "submitted"
    assert result.submission.is_entry and result.pair_set == pair_set
    stored = {pair.variant_text: pair for pair in Pair.objects.filter(pair_set=pair_set)}
    assert 0 < len(stored) == len(result.pairs) <= 30

    # The checks pass on what was stored, as a human's pair would.
    rules = PairRules.for_shared_task(shared_task)
    starter = TEXT_CLASSIFICATION.starter_index(
        StarterExample(e.id, e.external_id, e.text, e.label)
        for e in Example.objects.filter(dataset=cast.starter).order_by("position")
    )
    for pair in stored.values():
        checked, problems = TEXT_CLASSIFICATION.check_pair(
            PairInput(
                row=pair.row, original_id=pair.original.external_id,
                variant_text=pair.variant_text, variant_label=pair.variant_label,
                rationale=pair.rationale, tags=tuple(pair.tags),
            ),
            starter=starter,
            rules=rules,
        )  # fmt: skip
        assert checked is not None, (pair.variant_text, problems)
        assert pair.rationale.startswith("Baseline breaker (")
        assert set(pair.tags) <= set(shared_task.strategy_tags)

    # Gold labels by construction: label-keeping edits keep it, the others take the other one.
    sources = {made.source for made in result.pairs}
    assert len(sources) >= 3, sources
    for made in result.pairs:
        pair = stored[made.variant_text]
        assert made.source in KEEPS | CHANGES
        assert made.keeps_label == (made.source in KEEPS)
        # A label change by construction is a guess: stored unverified, and said so.
        assert pair.label_unverified is made.label_unverified is (made.source in CHANGES)
        assert ("Label unverified" in pair.rationale) is pair.label_unverified
        if made.keeps_label:
            assert pair.variant_label == pair.original_label
        else:
            assert pair.variant_label == changed_label(pair.original_label, shared_task.labels)
            assert pair.variant_label != pair.original_label
        assert made.source in pair.rationale
    assert result.unverified == sum(made.source in CHANGES for made in result.pairs)

    # At least one pair breaks the weak system, judged here on the model itself.
    model = fim_engine.load_system(weak_bow)
    pairs = list(stored.values())
    originals = model.predict([p.original_text for p in pairs]).labels
    variants = model.predict([p.variant_text for p in pairs]).labels
    broken = [
        p.variant_text
        for p, on_original, on_variant in zip(pairs, originals, variants, strict=True)
        if (on_original == p.original_label) != (on_variant == p.variant_label)
    ]
    assert broken
    # The run's own account of its breaks is the same.
    assert {m.variant_text for m in result.pairs if m.broken} == set(broken)
    # Breaking pairs come first.
    assert all(m.broken for m in result.pairs[: len(broken)])


def test_a_second_run_is_the_same_pairs_as_a_new_version_of_the_teams_set(db, weak_bow):
    cast, _ = ready_task(weak_bow)
    first = baseline_breaker_run(cast.shared_task, team_name="Strawman breaker", n=12)
    again = baseline_breaker_run(cast.shared_task, team_name="strawman BREAKER", n=12)

    assert not again.team_created and again.team == first.team
    assert again.pair_set.id != first.pair_set.id
    assert again.submission.is_entry and again.submission.replaced_entry == first.pair_set
    texts = [(p.original_id, p.variant_text, p.variant_label) for p in first.pairs]
    assert texts == [(p.original_id, p.variant_text, p.variant_label) for p in again.pairs]
    assert PairSet.objects.filter(team=first.team).count() == 2


def test_a_run_past_the_quota_of_sets_is_refused(db, weak_bow):
    cast, _ = ready_task(weak_bow)
    cast.shared_task.max_pair_sets_per_team = 1
    cast.shared_task.save()
    baseline_breaker_run(cast.shared_task, team_name="Strawman breaker", n=4)
    with pytest.raises(ValidationError, match="the most this shared task allows"):
        baseline_breaker_run(cast.shared_task, team_name="Strawman breaker", n=4)
    assert PairSet.objects.filter(team__name="Strawman breaker").count() == 1


@pytest.mark.parametrize(
    ("phase", "message"), [("build", "break phase opens"), ("contest", "break phase closed")]
)
def test_it_refuses_outside_the_break_phase_and_writes_nothing(db, weak_bow, phase, message):
    cast, _ = ready_task(weak_bow)
    start_phase_now(cast.shared_task, phase)
    with pytest.raises(ValidationError, match=message):
        baseline_breaker_run(cast.shared_task, team_name="Strawman breaker", n=5)
    assert not Team.objects.filter(name="Strawman breaker").exists()
    assert not get_user_model().objects.filter(username=BOT_USERNAME).exists()


@pytest.mark.parametrize("n", [0, -3])
def test_it_refuses_a_count_below_one(db, n):
    cast = build_cast(current_phase="break")
    with pytest.raises(ValidationError, match="at least one pair"):
        baseline_breaker_run(cast.shared_task, team_name="Strawman breaker", n=n)


def test_it_refuses_more_pairs_than_the_task_allows_per_set(db):
    cast = build_cast(current_phase="break")
    cast.shared_task.max_pairs_per_set = 10
    cast.shared_task.save()
    with pytest.raises(ValidationError, match="at most 10 pairs per set"):
        baseline_breaker_run(cast.shared_task, team_name="Strawman breaker", n=11)


def test_it_needs_a_ready_hosted_system(db):
    cast = build_cast(current_phase="break")
    with pytest.raises(ValidationError, match="no ready hosted system"):
        baseline_breaker_run(cast.shared_task, team_name="Strawman breaker", n=5)
    assert not Team.objects.filter(name="Strawman breaker").exists()


def test_it_refuses_a_builder_teams_name(db):
    cast = build_cast(current_phase="break")
    with pytest.raises(ValidationError, match="builder team"):
        baseline_breaker_run(cast.shared_task, team_name="strawman", n=5)


def test_it_submits_for_an_existing_team_only_as_one_of_its_members(db, weak_bow):
    cast, _ = ready_task(weak_bow)
    with pytest.raises(ValidationError, match="not one of its members"):
        baseline_breaker_run(cast.shared_task, team_name="Utrecht", n=5)
    result = baseline_breaker_run(cast.shared_task, team_name="Utrecht", n=5, user=cast.breaker)
    assert not result.team_created and result.team == cast.breaker_team
    assert result.pair_set.submitted_by == cast.breaker


def test_the_bot_runs_one_team_per_task(db, weak_bow):
    cast, _ = ready_task(weak_bow)
    baseline_breaker_run(cast.shared_task, team_name="Strawman breaker", n=3)
    with pytest.raises(ValidationError, match="already in the team 'Strawman breaker'"):
        baseline_breaker_run(cast.shared_task, team_name="Another bot", n=3)


def test_negations_go_only_where_the_label_change_is_plain():
    from edits.perturbations import negation_edits

    assert [p.text for p in negation_edits("The jokes are weak.")] == ["The jokes are not weak."]
    # "stale" is unrated: no opinion inside the predicate, a probe (issue 32).
    assert negation_edits("The jokes are stale.", probes=True)[0].probe
    assert [p.text for p in negation_edits("I did not enjoy it.")] == ["I enjoyed it."]
    assert negation_edits("The movie is neither funny nor clever.") == []
    assert negation_edits("It is not bad, and never dull.") == []
    # Measured on main: "It has not its flaws, but ..." and two-clause negations.
    assert negation_edits("It has its flaws, but it works.") == []
    assert negation_edits("The performances are weak and the story is shallow.") == []


def test_an_antonym_must_move_the_guide_and_neighbours_are_never_pairs(db, weak_bow):
    from bibi.baseline import candidates

    cast, _ = ready_task(weak_bow)
    hosted = candidates.hosted_systems(cast.shared_task)
    from bibi.guidance.ranking import boundary_ranking

    ranked = boundary_ranking(cast.shared_task, with_words=False)
    made = candidates.candidates_make(ranked, hosted, shared_task=cast.shared_task, seed=0)
    assert made and all(c.source != "neighbour" for c in made)
    assert all(c.projection > 0 for c in made if c.source == "antonym")


def test_the_command_submits_and_reports(db, weak_bow):
    cast, _ = ready_task(weak_bow)
    out = StringIO()
    call_command("baseline_breaker", "sst", "--team", "Strawman breaker", "--n", "8", stdout=out)
    text = out.getvalue()
    pair_set = PairSet.objects.get(team__name="Strawman breaker")
    assert f"pair set {pair_set.id}" in text
    assert f"{pair_set.pairs.count()} pairs" in text
    assert "created" in text
    unverified = pair_set.pairs.filter(label_unverified=True).count()
    assert (f"{unverified} pairs change the label" in text) is (unverified > 0)


def test_the_command_names_what_is_wrong(db):
    build_cast(current_phase="break")
    with pytest.raises(CommandError, match="No shared task has the slug 'nope'"):
        call_command("baseline_breaker", "nope", "--team", "Bot")
    with pytest.raises(CommandError, match="at least one pair"):
        call_command("baseline_breaker", "sst", "--team", "Bot", "--n", "0")
    with pytest.raises(CommandError, match="no ready hosted system"):
        call_command("baseline_breaker", "sst", "--team", "Bot")
    with pytest.raises(CommandError, match="No user is called 'ghost'"):
        call_command("baseline_breaker", "sst", "--team", "Bot", "--user", "ghost")


def test_typos_are_at_most_a_tenth_of_the_set_after_the_fluent_edits():
    from types import SimpleNamespace

    from bibi.baseline import breaker

    def made(i, source):
        ranked = SimpleNamespace(example=SimpleNamespace(id=i), strategy="", rank=i)
        perturbation = SimpleNamespace(keeps_label=True)
        return SimpleNamespace(
            source=source, text=f"{source} {i}", broken=(), ranked=ranked,
            perturbation=perturbation, projection=0.0, unverified=False,
        )  # fmt: skip

    typos = [made(i, "typo") for i in range(40)]
    synonyms = [made(100 + i, "synonym") for i in range(27)]
    chosen = breaker._select(typos + synonyms, 100)  # type: ignore[arg-type]

    # Every fluent edit, then 3 typos: 3 <= 0.1 x 30 (a fourth would be 4 > 3.1).
    assert [c.source for c in chosen] == ["synonym"] * 27 + ["typo"] * 3
    assert [c.text for c in chosen[27:]] == ["typo 0", "typo 1", "typo 2"]
    # Asked for fewer than the fluent edits there are: a tenth of them still typos.
    assert [c.source for c in breaker._select(typos + synonyms, 20)].count("typo") == 2  # type: ignore[arg-type]
