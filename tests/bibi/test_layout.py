from __future__ import annotations

import configparser
import functools
import importlib
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


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


@pytest.mark.parametrize("name", ["bibi", "scoring", "fim_engine", "edits"])
def test_each_distribution_package_imports_from_the_checkout(name):
    module = importlib.import_module(name)
    assert REPO_ROOT in Path(module.__file__).resolve().parents


def test_the_pure_libraries_never_import_django():
    offenders = [
        str(path.relative_to(REPO_ROOT))
        for root in ("scoring", "fim_engine", "edits")
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
    # Of fim_engine only its pure-Python modules may load (span imports read QA-SRL files; the
    # names of a sentence pair's segments, which guidance stores beside each word); of
    # edits only the rule of what an edit claims, never the language resources it loads.
    script = (
        "import os; os.environ['DJANGO_SETTINGS_MODULE'] = 'bibi.settings'; "
        "import django, sys; django.setup(); "
        "import bibi.urls; from django.urls import get_resolver; get_resolver().url_patterns; "
        "from bibi.celery import app; app.loader.import_default_modules(); "
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('torch', 'transformers', 'fim_engine', 'edits', 'lemminflect', 'wordfreq', 'nltk')); "
        "print(' '.join(loaded))"
    )
    result = _run([sys.executable, "-c", script], tmp_path)
    assert result.returncode == 0, result.stderr
    loaded = set(result.stdout.split())
    pure = {
        "fim_engine",
        "fim_engine.answer_spans",
        "fim_engine.qasrl",
        "fim_engine.sentence_pairs",
        "edits",
        "edits.claims",
    }
    assert loaded <= pure, loaded
    assert "edits.claims" in loaded  # the views and the guidance service ask it


# The rules every app shares, each defined once, where every app can reach it (issue 10.14-15).
ONE_PLACE = {
    "shared_task_for": "bibi/sharedtasks/apis/common.py",
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
    "phase_require_open": "bibi/sharedtasks/services/phases.py",
    "phase_require_ended": "bibi/sharedtasks/services/phases.py",
    "team_member_require": "bibi/sharedtasks/services/access.py",
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


# --- The import contracts (.importlinter) and the size limits, shown to catch what they forbid --


def _contracts() -> configparser.ConfigParser:
    config = configparser.ConfigParser(inline_comment_prefixes=None, comment_prefixes=(";", "#"))
    config.read(REPO_ROOT / ".importlinter")
    return config


def _modules_named_by_the_contracts() -> list[str]:
    """Every module the contracts require: the root packages, and the layers of every layers
    contract (optional ones left out) inside each of its containers."""
    config = _contracts()
    names = config["importlinter"]["root_packages"].split()
    for section in config.sections():
        contract = config[section]
        if contract.get("type") != "layers":
            continue
        layers = [n for n in contract["layers"].split() if n not in "|:" and not n.startswith("(")]
        containers = contract.get("containers", "").split()
        names += containers + [f"{c}.{layer}" for c in containers for layer in layers]
        names += [] if containers else layers
    return names


def _toy_tree(root: Path) -> Path:
    """A throwaway tree that has every module the contracts name, and no import at all."""
    for name in _modules_named_by_the_contracts():
        package = root.joinpath(*name.split("."))
        package.mkdir(parents=True, exist_ok=True)
        (package / "__init__.py").touch()
    for app in _contracts()["importlinter:contract:app-layers"]["containers"].split():
        for layer in ("services", "selectors", "models", "apis"):
            root.joinpath(*app.split("."), f"{layer}.py").touch()
    shutil.copy(REPO_ROOT / ".importlinter", root / ".importlinter")
    return root


def _plant(root: Path, module: str, line: str) -> None:
    path = root.joinpath(*module.split(".")).with_suffix(".py")
    if not path.exists():
        path = root.joinpath(*module.split("."), "__init__.py")
    path.write_text(path.read_text() + line + "\n")


def _lint_imports(root: Path) -> subprocess.CompletedProcess:
    import os

    # Wide enough that no contract's name is wrapped in the report.
    env = {**os.environ, "PYTHONPATH": str(root), "COLUMNS": "300"}
    lint_imports = Path(sys.executable).with_name("lint-imports")
    return subprocess.run(
        [str(lint_imports), "--no-cache"], cwd=root, env=env, capture_output=True, text=True
    )


def test_the_import_contracts_hold_on_a_tree_without_imports(tmp_path):
    result = _lint_imports(_toy_tree(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    contracts = [s for s in _contracts().sections() if s.startswith("importlinter:contract:")]
    assert f"{len(contracts)} kept, 0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "line", "broken"),
    [
        # A lower floor reaching up past evaluation.triggers.
        ("bibi.sharedtasks", "import bibi.evaluation", "The app floors"),
        ("bibi.api", "import bibi.web", "The app floors"),
        # Two apps of one floor in a cycle.
        ("bibi.systems", "import bibi.pairs\n", "No import cycle between the apps"),
        # A service reaching up to its app's API.
        ("bibi.pairs.services", "import bibi.pairs.apis", "Inside an app"),
        # The same inside label validation's package.
        (
            "bibi.pairs.validation.selectors",
            "import bibi.pairs.validation.services",
            "Inside an app",
        ),
        # The libraries stay pure.
        ("scoring", "import django", "The libraries scoring and fim_engine"),
        ("fim_engine", "import bibi.texts", "The libraries scoring and fim_engine"),
        ("edits.claims", "import torch", "The library edits is pure Python"),
        ("edits.perturbations", "import fim_engine.system", "The library edits is pure Python"),
        # A library's layers: the maths never imports a loader, the heuristics never the rule.
        ("fim_engine.spans", "import fim_engine.span_model", "Inside fim_engine"),
        ("fim_engine.system", "import fim_engine.bench", "Inside fim_engine"),
        ("edits.words", "import edits.perturbations", "Inside edits"),
        # Two modules of one library's layer in a cycle.
        ("fim_engine.system", "import fim_engine.formats", "No import cycle inside a library"),
        (
            "fim_engine.training",
            "import fim_engine.suggestions",
            "No import cycle inside a library",
        ),
    ],
)
def test_the_import_contracts_catch_a_planted_import(tmp_path, module, line, broken):
    root = _toy_tree(tmp_path)
    if broken.startswith("No import cycle between the apps"):
        _plant(root, "bibi.pairs", "import bibi.systems")
    if broken.startswith("No import cycle inside a library"):
        # The way back: a lazy import hides no cycle from the contract.
        back = {
            "fim_engine.system": "fim_engine.formats",
            "fim_engine.training": "fim_engine.suggestions",
        }
        _plant(root, back[module], f"def later():\n    import {module}")
    _plant(root, module, line)
    result = _lint_imports(root)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 broken" in result.stdout, result.stdout
    assert broken in result.stdout.split("Broken contracts", 1)[1], result.stdout


def test_evaluation_triggers_is_the_one_door_upwards(tmp_path):
    root = _toy_tree(tmp_path)
    (root / "bibi" / "evaluation" / "triggers.py").touch()
    for app in ("sharedtasks", "systems", "pairs"):
        _plant(root, f"bibi.{app}.services", "from bibi.evaluation import triggers")
    result = _lint_imports(root)
    assert result.returncode == 0, result.stdout + result.stderr


def _check_sizes(root: Path) -> subprocess.CompletedProcess:
    script = REPO_ROOT / "scripts" / "check_sizes.py"
    return subprocess.run(
        [sys.executable, str(script), str(root)], capture_output=True, text=True, timeout=60
    )


def _function(name: str, lines: int) -> str:
    """A function of exactly ``lines`` lines, from its ``def`` to its last line."""
    return f"def {name}():\n" + "".join(f"    x{i} = {i}\n" for i in range(lines - 1))


def test_the_size_check_passes_code_at_its_limits(tmp_path):
    body = _function("sixty", 60)
    module = body + "\n" * (500 - len(body.splitlines()))
    (tmp_path / "at_the_limits.py").write_text(module)
    assert len(module.splitlines()) == 500
    result = _check_sizes(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_size_check_fails_a_61_line_function_and_a_501_line_module(tmp_path):
    (tmp_path / "long_function.py").write_text(_function("sixty_one", 61))
    (tmp_path / "long_module.py").write_text("x = 1\n" * 501)
    result = _check_sizes(tmp_path)
    assert result.returncode == 1
    output = result.stdout + result.stderr
    assert "sixty_one is 61 lines (at most 60 per function)" in output
    assert "long_module.py: 501 lines (at most 500 per module)" in output


def _check_private_imports(root: Path) -> subprocess.CompletedProcess:
    script = REPO_ROOT / "scripts" / "check_private_imports.py"
    return subprocess.run(
        [sys.executable, str(script), str(root)], capture_output=True, text=True, timeout=60
    )


def test_the_private_import_check_names_a_private_helper_taken_across_modules(tmp_path):
    (tmp_path / "views.py").write_text(
        "from bibi.web.views.organizers import _organizer_page, page\n"
        "import fim_engine.formats as formats\n"
        "formats._read_json\n"
        "SharedTask._meta\n"
        "import os\n"
        "os._exit\n"
    )
    result = _check_private_imports(tmp_path)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert len(lines) == 2, result.stdout
    assert "views.py:1: imports _organizer_page from bibi.web.views.organizers" in lines[0]
    assert "views.py:3: uses formats._read_json of another module" in lines[1]


def test_the_private_import_check_passes_public_names_and_dunders(tmp_path):
    (tmp_path / "ok.py").write_text(
        "from bibi.tasktypes import TaskType, __all__\nfrom __future__ import annotations\n"
    )
    assert _check_private_imports(tmp_path).returncode == 0
