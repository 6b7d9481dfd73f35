from __future__ import annotations

import functools
import importlib
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.embedded


def test_import_platform_is_the_standard_library():
    import platform

    stdlib = Path(sysconfig.get_paths()["stdlib"]).resolve()
    assert Path(platform.__file__).resolve().parent == stdlib
    assert callable(platform.python_version)


def test_the_platform_source_root_is_not_a_package():
    assert not (REPO_ROOT / "platform" / "__init__.py").exists()


def test_no_package_under_platform_has_a_standard_library_name():
    packages = [
        p.name
        for p in (REPO_ROOT / "platform").iterdir()
        if p.is_dir() and not p.name.startswith((".", "_"))
    ]
    assert "bibi" in packages
    clashes = sorted(set(packages) & set(sys.stdlib_module_names))
    assert clashes == []


@pytest.mark.parametrize("name", ["bibi", "scoring", "fim_engine"])
def test_each_distribution_package_imports_from_the_checkout(name):
    module = importlib.import_module(name)
    assert REPO_ROOT in Path(module.__file__).resolve().parents


def test_the_pure_libraries_never_import_django():
    offenders = [
        str(path.relative_to(REPO_ROOT))
        for root in ("scoring", "fim_engine")
        for path in (REPO_ROOT / root).rglob("*.py")
        if "import django" in path.read_text() or "from django" in path.read_text()
    ]
    assert offenders == []


def _run(command: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    import os

    full_env = {**os.environ, "DEBUG": "1", "BIBI_TEST_BACKEND": "embedded", **env}
    full_env.pop("DJANGO_SETTINGS_MODULE", None)
    full_env.pop("DATABASE_URL", None)
    full_env.pop("REDIS_URL", None)
    full_env["VAR_DIR"] = str(cwd / "var")
    return subprocess.run(
        command, cwd=cwd, env=full_env, capture_output=True, text=True, timeout=120
    )


def test_manage_py_works_from_any_directory(tmp_path):
    result = _run([sys.executable, str(REPO_ROOT / "manage.py"), "check"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_celery_finds_the_app_from_any_directory(tmp_path):
    result = _run([sys.executable, "-m", "celery", "-A", "bibi", "report"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "bibi" in result.stdout


def test_gunicorn_loads_the_wsgi_app_from_any_directory(tmp_path):
    gunicorn = Path(sys.executable).with_name("gunicorn")
    result = _run([str(gunicorn), "--check-config", "bibi.wsgi"], tmp_path)
    assert result.returncode == 0, result.stderr + result.stdout


def test_the_web_process_never_loads_torch(tmp_path):
    # Every URL, view, serializer and task module the web process imports, and no model code:
    # torch costs the web process seconds and hundreds of megabytes, and only workers run models.
    script = (
        "import os; os.environ['DJANGO_SETTINGS_MODULE'] = 'bibi.settings'; "
        "import django, sys; django.setup(); "
        "import bibi.urls; from django.urls import get_resolver; get_resolver().url_patterns; "
        "from bibi.celery import app; app.loader.import_default_modules(); "
        "loaded = sorted(m for m in ('torch', 'transformers', 'fim_engine') if m in sys.modules); "
        "print(loaded)"
    )
    result = _run([sys.executable, "-c", script], tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


# The rules every app shares, each defined once, where every app can reach it (issue 10.14-15).
ONE_PLACE = {
    "shared_task_for": "bibi/api.py",
    "paginated": "bibi/api.py",
    "rejected_file_response": "bibi/api.py",
    "decode_upload": "bibi/files/decoding.py",
    "detect_format": "bibi/files/rows.py",
    "read_rows": "bibi/files/rows.py",
    "RowError": "bibi/files/errors.py",
    "FileRejected": "bibi/files/errors.py",
    "label_map_parse": "bibi/labelmaps.py",
    "label_map_clean": "bibi/labelmaps.py",
    "upload_size_require": "bibi/uploads.py",
    "normalize_text": "bibi/texts.py",
    "enqueue": "bibi/queue.py",
    "enqueue_on_commit": "bibi/queue.py",
    "phase_require_open": "bibi/sharedtasks/services.py",
    "phase_require_ended": "bibi/sharedtasks/services.py",
    "team_member_require": "bibi/sharedtasks/services.py",
    "is_team_member": "bibi/sharedtasks/selectors.py",
}


@functools.cache
def _definitions() -> dict[str, list[str]]:
    """Every top-level function and class of platform/, by name → the files defining it."""
    import ast

    found: dict[str, list[str]] = {}
    source_root = REPO_ROOT / "platform"
    for path in source_root.rglob("*.py"):
        if "migrations" in path.parts:
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                relative = path.relative_to(source_root).as_posix()
                found.setdefault(node.name, []).append(relative)
    return found


@pytest.mark.parametrize("name", sorted(ONE_PLACE))
def test_each_shared_rule_is_defined_once_where_every_app_reaches_it(name):
    assert _definitions().get(name) == [ONE_PLACE[name]]
