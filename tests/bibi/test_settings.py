from __future__ import annotations

import os
import subprocess
import sys


def _settings_in_subprocess(env: dict[str, str], expression: str) -> subprocess.CompletedProcess:
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DEBUG", "SECRET_KEY", "DATABASE_URL", "REDIS_URL"}
    }
    clean.update(env)
    code = f"import bibi.settings as s; print(({expression}))"
    return subprocess.run(
        [sys.executable, "-c", code], env=clean, capture_output=True, text=True, timeout=60
    )


def test_it_refuses_to_start_without_a_secret_key_when_debug_is_off(tmp_path):
    result = _settings_in_subprocess({"DEBUG": "0", "VAR_DIR": str(tmp_path)}, "s.SECRET_KEY")
    assert result.returncode != 0
    assert "SECRET_KEY is required when DEBUG is off" in result.stderr


def test_it_says_which_variable_is_not_a_boolean(tmp_path):
    result = _settings_in_subprocess({"DEBUG": "maybe", "VAR_DIR": str(tmp_path)}, "s.DEBUG")
    assert result.returncode != 0
    assert "DEBUG='maybe' is not a boolean" in result.stderr


def test_it_says_which_variable_is_not_a_whole_number(tmp_path):
    env = {"DEBUG": "1", "VAR_DIR": str(tmp_path), "CELERY_TASK_TIME_LIMIT": "ten"}
    result = _settings_in_subprocess(env, "s.CELERY_TASK_TIME_LIMIT")
    assert result.returncode != 0
    assert "CELERY_TASK_TIME_LIMIT='ten' is not a whole number" in result.stderr


def test_the_embedded_default_is_sqlite_under_var_with_in_process_tasks(tmp_path):
    expression = "s.DATABASES['default']['ENGINE'], s.DATABASES['default']['NAME'], s.CELERY_TASK_ALWAYS_EAGER"
    result = _settings_in_subprocess({"DEBUG": "1", "VAR_DIR": str(tmp_path)}, expression)
    assert result.returncode == 0, result.stderr
    assert (
        result.stdout.strip()
        == f"('django.db.backends.sqlite3', '{tmp_path / 'bibi.sqlite3'}', True)"
    )


def test_database_and_broker_come_from_the_environment(tmp_path):
    env = {
        "DEBUG": "0",
        "SECRET_KEY": "x" * 50,
        "VAR_DIR": str(tmp_path),
        "DATABASE_URL": "postgres://bibi:pw@db.internal:6543/bibi",
        "REDIS_URL": "redis://cache.internal:6380/2",
        "CELERY_TASK_SOFT_TIME_LIMIT": "30",
        "CELERY_TASK_TIME_LIMIT": "45",
    }
    expression = (
        "s.DATABASES['default']['HOST'], s.DATABASES['default']['PORT'], s.CELERY_BROKER_URL, "
        "s.CELERY_TASK_ALWAYS_EAGER, s.CELERY_TASK_SOFT_TIME_LIMIT, s.CELERY_TASK_TIME_LIMIT"
    )
    result = _settings_in_subprocess(env, expression)
    assert result.returncode == 0, result.stderr
    assert (
        result.stdout.strip()
        == "('db.internal', 6543, 'redis://cache.internal:6380/2', False, 30, 45)"
    )


def test_every_variable_read_is_listed_in_env_example():
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    source = (root / "platform" / "bibi" / "settings.py").read_text()
    read = set(re.findall(r'env_\w+\("([A-Z_]+)"', source))
    listed = set(re.findall(r"^([A-Z_]+)=", (root / "deploy" / "env.example").read_text(), re.M))
    assert read, "the settings module reads no variable?"
    assert read - listed == set()


def test_it_refuses_an_unknown_model_precision_and_names_the_choices(tmp_path):
    env = {"DEBUG": "1", "VAR_DIR": str(tmp_path), "SYSTEM_PRECISION": "fp16"}
    result = _settings_in_subprocess(env, "s.SYSTEM_PRECISION")
    assert result.returncode != 0
    assert "SYSTEM_PRECISION='fp16': use one of fp32, tf32, bf16" in result.stderr


def test_the_platforms_precisions_are_fim_engines():
    from bibi.settings import SYSTEM_PRECISIONS
    from fim_engine.precision import PRECISIONS

    assert SYSTEM_PRECISIONS == PRECISIONS


def test_it_refuses_a_model_memory_share_outside_1_to_100(tmp_path):
    env = {"DEBUG": "1", "VAR_DIR": str(tmp_path), "SYSTEM_MODEL_MEMORY_PERCENT": "0"}
    result = _settings_in_subprocess(env, "s.SYSTEM_MODEL_MEMORY_PERCENT")
    assert result.returncode != 0
    assert "SYSTEM_MODEL_MEMORY_PERCENT=0 must be between 1 and 100" in result.stderr


def test_a_bucket_adds_the_archives_storage(tmp_path):
    env = {"DEBUG": "1", "VAR_DIR": str(tmp_path), "SYSTEM_ARCHIVE_BUCKET": "bibi-archives"}
    result = _settings_in_subprocess(env, "s.STORAGES['archives']['OPTIONS']['bucket_name']")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "bibi-archives"
    result = _settings_in_subprocess({"DEBUG": "1", "VAR_DIR": str(tmp_path)}, "sorted(s.STORAGES)")
    assert result.stdout.strip() == "['default', 'staticfiles']"


def test_it_refuses_a_worker_credential_shorter_than_32_characters(tmp_path):
    env = {"DEBUG": "1", "VAR_DIR": str(tmp_path), "WORKER_TOKEN": "w" * 31}
    result = _settings_in_subprocess(env, "s.WORKER_TOKEN")
    assert result.returncode != 0
    assert "WORKER_TOKEN is 31 characters long: the worker credential must be at least 32" in (
        result.stderr
    )


def test_a_worker_credential_of_32_characters_or_none_is_accepted(tmp_path):
    for token in ("w" * 32, ""):
        env = {"DEBUG": "1", "VAR_DIR": str(tmp_path), "WORKER_TOKEN": token}
        result = _settings_in_subprocess(env, "len(s.WORKER_TOKEN)")
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == str(len(token))
