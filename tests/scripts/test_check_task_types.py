"""``scripts/check_task_types.py`` (run by ``make lint-layout``): a task-type branch outside
``platform/bibi/tasktypes/`` fails the check with its file and line; asking the type what it
can do, registering parts under a type, and the package itself pass; so does the real tree."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
SCRIPT = REPO_ROOT / "scripts" / "check_task_types.py"

BRANCHING_PYTHON = """\
from bibi.sharedtasks.models import SharedTask
from bibi.tasktypes import SPAN, SPAN_EXTRACTION, TEXT_CLASSIFICATION
from bibi.tasktypes.span_extraction import SpanExtraction


def columns(shared_task, kind, snapshot):
    if shared_task.is_span:
        return 1
    if shared_task.task_type == SharedTask.TaskType.SPAN_EXTRACTION:
        return 2
    if kind.key == "span_extraction":
        return 3
    if kind is TEXT_CLASSIFICATION:
        return 4
    if shared_task.kind.answers != SPAN:
        return 5
    if snapshot.settings_used["task_type"] in ("span_extraction",):
        return 6
    if isinstance(kind, SpanExtraction):
        return 7
    return [SPAN_EXTRACTION == kind]
"""
BRANCHES = {
    (7, "is_span"),
    (9, "SharedTask.TaskType.SPAN_EXTRACTION (a TaskType member)"),
    (9, "a comparison with SPAN_EXTRACTION"),
    (11, "a comparison with kind.key"),
    (13, "a comparison with TEXT_CLASSIFICATION"),
    (15, "a comparison with shared_task.kind.answers"),
    (17, "a comparison with snapshot.settings_used['task_type']"),
    (19, "isinstance of SpanExtraction"),
    (21, "a comparison with SPAN_EXTRACTION"),
}

ASKING_PYTHON = """\
from bibi.tasktypes import LABEL, SPAN_EXTRACTION, Parts

RUNNERS = Parts("runner")
RUNNERS.register(LABEL, print)
RUNNERS.register(SPAN_EXTRACTION.key, print)


def columns(shared_task, instance, used, data):
    if shared_task.kind.labelled and len(shared_task.kind.segments) > 1:
        return RUNNERS.of(shared_task.kind)
    if "task_type" in used:
        return used["answer_mode"]
    if data["task_type"] != getattr(instance, "task_type", None):
        return "the task type never changes"
    return [answer for answer in data["answers"] if answer == "x"]
"""

BRANCHING_TEMPLATE = """\
<h1>{% if shared_task.is_span %}Span{% endif %}</h1>
<p>{% if shared_task.task_type == "span_extraction" %}a{% elif shared_task.kind.answers == 'span' %}b{% endif %}</p>
{% if x %}{% elif kind.key != "text_classification" %}c{% endif %}
"""
ASKING_TEMPLATE = """\
<p>{{ shared_task.get_task_type_display }}{% if shared_task.kind.labelled %} labels{% endif %}</p>
{% kind_include "pair_cells" %} {{ shared_task|kind_word:"accuracy" }}
"""


def _check(*roots: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, roots)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def _plant(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_it_names_every_branch_on_the_type_in_python_by_file_and_line(tmp_path):
    path = _plant(tmp_path, "bibi/web/views/results.py", BRANCHING_PYTHON)
    result = _check(tmp_path)
    assert result.returncode == 1
    lines = [line for line in result.stdout.splitlines() if line.startswith(f"{path}:")]
    found = {(int(line.split(":")[1]), line.split(": ")[1]) for line in lines}
    assert found == BRANCHES
    assert all("ask the task's type (shared_task.kind" in line for line in lines)
    assert f"{len(BRANCHES)} task-type branch(es)" in result.stdout


def test_it_names_every_branch_on_the_type_in_templates(tmp_path):
    path = _plant(tmp_path, "bibi/web/templates/web/page.html", BRANCHING_TEMPLATE)
    result = _check(tmp_path)
    assert result.returncode == 1
    assert f"{path}:1: is_span" in result.stdout
    assert f"{path}:2: a condition on task_type" in result.stdout
    assert f"{path}:2: a condition on kind.answers" in result.stdout
    assert f"{path}:3: a condition on kind.key" in result.stdout
    assert "{% kind_include" in result.stdout  # the hint


def test_asking_the_type_and_registering_parts_under_it_pass(tmp_path):
    _plant(tmp_path, "bibi/baseline/breaker.py", ASKING_PYTHON)
    _plant(tmp_path, "bibi/web/templates/web/page.html", ASKING_TEMPLATE)
    result = _check(tmp_path)
    assert result.returncode == 0, result.stdout
    assert result.stdout == ""


def test_the_task_type_package_and_migrations_may_name_the_types(tmp_path):
    _plant(tmp_path, "bibi/tasktypes/span_extraction/__init__.py", BRANCHING_PYTHON)
    _plant(tmp_path, "bibi/sharedtasks/migrations/0009_types.py", BRANCHING_PYTHON)
    result = _check(tmp_path)
    assert result.returncode == 0, result.stdout


def test_the_platform_has_no_branch_on_the_task_type():
    result = _check(REPO_ROOT / "platform")
    assert result.returncode == 0, result.stdout
