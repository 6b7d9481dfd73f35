"""The demo builder on the embedded default: a whole task built, scored and published.

Training is the slow part and fim_engine's own tests cover it: here the tiny fixture models
stand in for the three trained baselines; everything else (uploads, validation, pairs, the
baseline breaker, scoring, publication) runs for real.
"""

from __future__ import annotations

import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from bibi.demo import builder, models
from bibi.demo.data import DemoData
from bibi.sharedtasks.models import Phase, SharedTask, Team

from .conftest import FIXTURE_DATA, REPO_ROOT, STAND_INS, TINY, published_tables

# The span and sentence-pair tasks (test_span_demo.py, test_pair_demo.py) are left out here:
# their data directories hold no QA-SRL or nli-cad files.
SENTIMENT_ONLY = ("--span-data", str(FIXTURE_DATA), "--pair-data", str(FIXTURE_DATA))

pytestmark = [pytest.mark.embedded, pytest.mark.django_db(transaction=True)]


def test_the_demo_builds_scores_and_publishes_a_whole_task(tiny_models, var_dir):
    out = StringIO()
    call_command("demo", *SENTIMENT_ONLY, "--data", str(FIXTURE_DATA), stdout=out)
    shared_task = SharedTask.objects.get(slug=builder.SLUG)

    assert sorted(tiny_models) == ["bow", "cnn", "minilm"]
    assert shared_task.phases.get(kind=Phase.Kind.RESULTS).is_open()
    builders, breakers = published_tables(shared_task)
    assert sorted(row["system"] for row in builders) == [
        f"{builder.BUILDER_TEAM} / bow",
        f"{builder.BUILDER_TEAM} / cnn",
        f"{builder.BUILDER_TEAM} / minilm",
    ]
    assert all(row["pairs"] > 0 and row["dev_accuracy"] is not None for row in builders)
    teams = {row["team"]: row for row in breakers}
    assert set(teams) == {builder.BREAKER_TEAM, builder.BASELINE_TEAM}
    assert teams[builder.BREAKER_TEAM]["pairs"] == 25
    assert teams[builder.BASELINE_TEAM]["pairs"] > 0
    assert Team.objects.filter(shared_task=shared_task, kind=Team.Kind.BREAKER).count() == 2

    text = out.getvalue()
    for row in builders:
        assert row["system"] in text
    for username, (password, _) in builder.ACCOUNTS.items():
        assert f"{username:<10} {password}" in text
    assert (var_dir / "demo-data.txt").read_text().strip() == DemoData.find(FIXTURE_DATA).digest()


def test_the_demo_accounts_log_in(tiny_models, var_dir, client):
    call_command("demo", *SENTIMENT_ONLY, "--data", str(FIXTURE_DATA), stdout=StringIO())
    for username, (password, _) in builder.ACCOUNTS.items():
        assert client.login(username=username, password=password), username
    page = client.get(f"/tasks/{builder.SLUG}/")
    assert page.status_code == 200


def test_a_second_run_builds_nothing_and_reset_builds_again(tiny_models, var_dir):
    call_command("demo", *SENTIMENT_ONLY, "--data", str(FIXTURE_DATA), stdout=StringIO())
    first = SharedTask.objects.get(slug=builder.SLUG)
    tiny_models.clear()

    out = StringIO()
    call_command("demo", *SENTIMENT_ONLY, "--data", str(FIXTURE_DATA), stdout=out)
    assert "nothing to do" in out.getvalue()
    assert SharedTask.objects.get(slug=builder.SLUG).id == first.id
    assert tiny_models == []
    assert builder.BASELINE_TEAM in out.getvalue()  # the leaderboards are printed again

    call_command("demo", *SENTIMENT_ONLY, "--data", str(FIXTURE_DATA), "--reset", stdout=StringIO())
    assert SharedTask.objects.get(slug=builder.SLUG).id != first.id
    assert sorted(tiny_models) == ["bow", "cnn", "minilm"]


def test_other_data_builds_the_task_again(tiny_models, var_dir, tmp_path):
    call_command("demo", *SENTIMENT_ONLY, "--data", str(FIXTURE_DATA), stdout=StringIO())
    first = SharedTask.objects.get(slug=builder.SLUG).id
    other = tmp_path / "other"
    shutil.copytree(FIXTURE_DATA, other)
    (other / "pairs.tsv").write_text(
        "\n".join((FIXTURE_DATA / "pairs.tsv").read_text().splitlines()[:6]) + "\n"
    )
    call_command("demo", *SENTIMENT_ONLY, "--data", str(other), stdout=StringIO())
    shared_task = SharedTask.objects.get(slug=builder.SLUG)
    assert shared_task.id != first
    _, breakers = published_tables(shared_task)
    assert {row["team"]: row["pairs"] for row in breakers}[builder.BREAKER_TEAM] == 5


def test_a_failed_step_leaves_no_half_built_task(tiny_models, var_dir, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(FIXTURE_DATA, broken)
    with (broken / "pairs.tsv").open("a") as pairs:
        pairs.write("s01\tA completely different sentence about nothing at all.\tpositive\tx\t\n")
    with pytest.raises(CommandError, match="could not be built: line 27: "):
        call_command("demo", *SENTIMENT_ONLY, "--data", str(broken), stdout=StringIO())
    assert not SharedTask.objects.filter(slug=builder.SLUG).exists()
    assert not (var_dir / "demo-data.txt").exists()


def test_data_directories_are_recognised_or_refused_clearly(tmp_path):
    assert DemoData.find(FIXTURE_DATA).layout == "fixtures"
    sst2 = REPO_ROOT.parent / "shared" / "data" / "sst2"
    if sst2.is_dir():
        found = DemoData.find(sst2)
        assert (found.layout, found.pairs) == ("sst2", None)
    with pytest.raises(CommandError, match="does not exist"):
        DemoData.find(tmp_path / "nowhere")
    (tmp_path / "train.tsv").write_text("id\ttext\tlabel\n")
    with pytest.raises(CommandError, match="neither the demo layout"):
        DemoData.find(tmp_path)


def test_cached_models_are_found_by_their_data_and_settings(var_dir, monkeypatch):
    """model_train trains once per (architecture, data, settings) and never leaves a partial
    model in the cache."""
    from fim_engine import training

    calls = []

    def fake_train(architecture, train, dev, out_dir, **options):
        calls.append(architecture)
        out = Path(out_dir)
        shutil.copytree(TINY / STAND_INS[architecture], out)
        return type("Report", (), {"dev_accuracy": 0.75, "steps": 3})()

    monkeypatch.setattr(training, "train_system", fake_train)
    data = DemoData.find(FIXTURE_DATA)
    first = models.model_train("bow", data, progress=False)
    again = models.model_train("bow", data, progress=False)
    assert (first.cached, again.cached, again.dev_accuracy) == (False, True, 0.75)
    assert first.directory == again.directory
    assert calls == ["bow"]
    assert not list(models.cache_dir().glob("*.partial"))
    archive = models.model_archive(first.directory, "bow.zip")
    import zipfile

    names = zipfile.ZipFile(archive).namelist()
    assert "demo-training.json" not in names and names


def test_a_second_task_is_left_open_in_its_break_phase_for_every_role(tiny_models, var_dir):
    """demo-sentiment-open: the same trained systems (trained once), its break phase running,
    and each demo account in its role there: the breaker uploads the sample pairs, the
    organizer closes the phase."""
    from django.core.files.base import ContentFile

    from bibi.pairs import services as pair_services
    from bibi.sharedtasks import services as task_services
    from bibi.systems.models import SystemVersion

    out = StringIO()
    call_command("demo", *SENTIMENT_ONLY, "--data", str(FIXTURE_DATA), stdout=out)
    assert sorted(tiny_models) == ["bow", "cnn", "minilm"]
    assert f"/tasks/{builder.OPEN_SLUG}/" in out.getvalue()
    task = SharedTask.objects.get(slug=builder.OPEN_SLUG)
    assert task.phase_at().kind == Phase.Kind.BREAK
    assert not task.snapshots.exists()
    versions = SystemVersion.objects.filter(system__team__shared_task=task)
    assert sorted(v.system.name for v in versions) == ["bow", "cnn", "minilm"]
    assert {v.status for v in versions} == {SystemVersion.Status.READY}

    users = builder.accounts_ensure()
    assert list(task.organizers.all()) == [users["organizer"]]
    breakers = task.teams.get(kind=Team.Kind.BREAKER)
    assert breakers.memberships.get().user == users["breaker"]
    assert task.teams.get(kind=Team.Kind.BUILDER).memberships.get().user == users["builder"]
    assert not breakers.pair_sets.exists()
    pairs = FIXTURE_DATA / "pairs.tsv"
    submission = pair_services.pair_set_upload(
        team=breakers, user=users["breaker"], file=ContentFile(pairs.read_bytes(), name=pairs.name)
    )
    assert submission.pair_set.pair_count == 25
    task_services.phase_close_now(phase=task.phases.get(kind="break"), actor=users["organizer"])
    assert task.phase_at().kind == Phase.Kind.CONTEST

    again = StringIO()
    call_command("demo", *SENTIMENT_ONLY, "--data", str(FIXTURE_DATA), stdout=again)
    assert "nothing to do" in again.getvalue()
    SharedTask.objects.filter(slug=builder.OPEN_SLUG).delete()
    call_command("demo", *SENTIMENT_ONLY, "--data", str(FIXTURE_DATA), stdout=StringIO())
    assert SharedTask.objects.get(slug=builder.OPEN_SLUG).phase_at().kind == Phase.Kind.BREAK
