"""deploy/compose.yaml says what it means: read as Docker Compose reads it, with no engine needed."""

from __future__ import annotations

import re
import shlex
from importlib import metadata
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

import pytest
from packaging.requirements import Requirement

REPO_ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = REPO_ROOT / "deploy" / "Dockerfile"

APP_SERVICES = {"migrate", "web", "worker-gpu", "worker-default", "beat"}
ONE_SHOT = {"migrate"}


def _option(words: list[str], *names: str) -> str | None:
    for index, word in enumerate(words):
        if word in names:
            return words[index + 1]
        for name in names:
            if name.startswith("--") and word.startswith(name + "="):
                return word.split("=", 1)[1]
    return None


def _console_scripts() -> set[str]:
    """Every console script a plain install of the project (no dev extra) puts on the PATH."""
    seen: set[tuple[str, frozenset[str]]] = set()
    scripts: set[str] = set()
    pending: list[tuple[str, frozenset[str]]] = [("bibi", frozenset())]
    while pending:
        name, extras = pending.pop()
        if (name.lower(), extras) in seen:
            continue
        seen.add((name.lower(), extras))
        distribution = metadata.distribution(name)
        scripts |= {ep.name for ep in distribution.entry_points if ep.group == "console_scripts"}
        for line in distribution.requires or []:
            requirement = Requirement(line)
            wanted = requirement.marker is None or any(
                requirement.marker.evaluate({"extra": extra}) for extra in {"", *extras}
            )
            if wanted:
                pending.append((requirement.name, frozenset(requirement.extras)))
    return scripts


def _image_files() -> dict[PurePosixPath, Path]:
    """Files of the checkout the Dockerfile copies, by their path in the image."""
    workdir = PurePosixPath("/")
    files: dict[PurePosixPath, Path] = {}
    for line in DOCKERFILE.read_text().splitlines():
        words = line.split()
        if not words or words[0] not in {"WORKDIR", "COPY"}:
            continue
        if words[0] == "WORKDIR":
            workdir = workdir / words[1]
            continue
        *sources, target = words[1:]
        destination = workdir / target
        for source in sources:
            local = REPO_ROOT / source
            paths = (
                [local] if local.is_file() else sorted(p for p in local.rglob("*") if p.is_file())
            )
            for path in paths:
                inside = path.relative_to(local) if path != local else None
                if inside is None:
                    place = destination / local.name if target.endswith("/") else destination
                else:
                    place = destination / inside.as_posix()
                files[place] = path
    return files


def _workdir() -> PurePosixPath:
    return PurePosixPath(re.findall(r"^WORKDIR (\S+)", DOCKERFILE.read_text(), re.M)[-1])


def _assert_runs_in_the_image(words: list[str], where: str) -> None:
    from django.core.management import get_commands

    program, *arguments = words
    if program == "python":
        script = PurePosixPath(arguments[0])
        path = script if script.is_absolute() else _workdir() / script
        assert path in _image_files(), f"{where}: {path} is not copied into the image"
        if script.name == "manage.py":
            assert arguments[1] in get_commands(), f"{where}: no management command {arguments[1]}"
        return
    assert program in _console_scripts(), f"{where}: {program} is no entry point of the image"
    if program == "django-admin":
        assert arguments[0] in get_commands(), f"{where}: no management command {arguments[0]}"


def test_every_long_running_service_has_a_health_check(compose):
    long_running = set(compose["services"]) - ONE_SHOT
    assert long_running == {"web", "worker-gpu", "worker-default", "beat", "redis", "postgres"}
    for name in long_running:
        healthcheck = compose["services"][name].get("healthcheck") or {}
        assert healthcheck.get("test"), f"{name} has no health check"
        assert healthcheck.get("disable") is not True, f"{name} disables its health check"


def test_every_command_names_an_entry_point_of_the_image(compose, deploy):
    for name in APP_SERVICES:
        service = compose["services"][name]
        assert service["image"] == compose["services"]["web"]["image"], "one image for all"
        _assert_runs_in_the_image(deploy.words(service["command"]), f"{name} command")
        if name not in ONE_SHOT:
            words = deploy.health_words(service["healthcheck"])
            _assert_runs_in_the_image(words, f"{name} health check")


def test_the_image_collects_static_files_and_starts_gunicorn_by_default():
    text = DOCKERFILE.read_text()
    run_lines = [line for line in text.splitlines() if line.startswith("RUN ")]
    collect = [line for line in run_lines if "manage.py collectstatic" in line]
    assert len(collect) == 1
    command = shlex.split(collect[0].removeprefix("RUN "))
    _assert_runs_in_the_image(command[command.index("python") :], "Dockerfile collectstatic")
    cmd = re.findall(r"^CMD (\[.*\])$", text, re.M)
    assert cmd and cmd[-1].startswith('["gunicorn", "bibi.wsgi"')


def test_the_image_runs_as_a_user_of_its_own():
    users = re.findall(r"^USER (\S+)$", DOCKERFILE.read_text(), re.M)
    assert users and users[-1] not in {"root", "0"}


def test_the_image_installs_torch_as_pyproject_pins_it():
    text = DOCKERFILE.read_text()
    assert "grep -E '^torch==' /tmp/requirements.txt" in text
    assert "-c /tmp/constraints.txt" in text
    pins = [
        dep
        for dep in metadata.distribution("bibi").requires or []
        if Requirement(dep).name == "torch"
    ]
    assert len(pins) == 1 and str(Requirement(pins[0]).specifier).startswith("==")


def test_the_database_every_service_uses_is_the_one_postgres_creates(compose):
    postgres = compose["services"]["postgres"]["environment"]
    for name in APP_SERVICES:
        url = urlsplit(compose["services"][name]["environment"]["DATABASE_URL"])
        assert url.hostname == "postgres", name
        assert url.path.lstrip("/") == postgres["POSTGRES_DB"], name
        assert url.username == postgres["POSTGRES_USER"], name
        assert url.password == postgres["POSTGRES_PASSWORD"], name


def test_the_broker_every_service_uses_is_the_redis_of_the_stack(compose):
    redis = compose["services"]["redis"]
    password = redis["command"][redis["command"].index("--requirepass") + 1]
    assert redis["environment"]["REDISCLI_AUTH"] == password
    for name in APP_SERVICES - ONE_SHOT:
        url = urlsplit(compose["services"][name]["environment"]["REDIS_URL"])
        assert (url.hostname, url.port, url.password) == ("redis", 6379, password), name


def test_it_refuses_to_start_without_the_passwords(deploy):
    for variable in ("POSTGRES_PASSWORD", "REDIS_PASSWORD"):
        env = {**deploy.env, variable: ""}
        with pytest.raises(deploy.MissingVariable, match=f"{variable} in deploy/.env"):
            deploy.load("compose.yaml", env)


def test_migrations_run_before_web_and_workers_start(compose, deploy):
    migrate = compose["services"]["migrate"]
    assert deploy.words(migrate["command"])[:3] == ["python", "manage.py", "migrate"]
    assert migrate["restart"] == "no"
    assert migrate["depends_on"]["postgres"]["condition"] == "service_healthy"
    for name in ("web", "worker-gpu", "worker-default"):
        depends_on = compose["services"][name]["depends_on"]
        assert depends_on["migrate"] == {"condition": "service_completed_successfully"}, name


def test_the_gpu_worker_takes_one_model_at_a_time_from_the_gpu_queue_on_a_gpu(compose, deploy):
    service = compose["services"]["worker-gpu"]
    words = deploy.words(service["command"])
    assert words[:4] == ["celery", "-A", "bibi", "worker"]
    assert _option(words, "-Q", "--queues") == "interactive,gpu"
    assert _option(words, "-c", "--concurrency") == "1"
    devices = service["deploy"]["resources"]["reservations"]["devices"]
    assert devices == [{"driver": "nvidia", "count": 1, "capabilities": ["gpu"]}]


def test_the_default_worker_takes_the_default_queue(compose, deploy):
    words = deploy.words(compose["services"]["worker-default"]["command"])
    assert words[:4] == ["celery", "-A", "bibi", "worker"]
    assert _option(words, "-Q", "--queues") == "default"


def test_each_celery_health_check_pings_its_own_node(compose, deploy):
    for name in ("worker-gpu", "worker-default", "beat"):
        service = compose["services"][name]
        node = _option(deploy.words(service["command"]), "-n", "--hostname")
        check = deploy.health_words(service["healthcheck"])
        assert check[:5] == ["celery", "-A", "bibi", "inspect", "ping"], name
        # %h is the host name; in a container Docker sets HOSTNAME to it.
        assert _option(check, "--destination", "-d") == node.replace("%h", "${HOSTNAME}"), name


def test_there_is_exactly_one_beat(compose, deploy):
    beats = []
    for name, service in compose["services"].items():
        words = deploy.words(service.get("command") or [])
        if words[:1] == ["celery"] and "beat" in words:
            beats.append(name)
        assert "-B" not in words and "--beat" not in words, f"{name} runs a beat inside a worker"
    assert beats == ["beat"]
    beat = deploy.words(compose["services"]["beat"]["command"])
    # Without it beat answers no ping, and its health check could never pass.
    assert "--enable-remote-control" in beat
    assert compose["services"]["beat"].get("deploy", {}).get("replicas", 1) == 1


def test_web_and_workers_see_the_model_store_and_uploads_where_their_settings_say(compose):
    for name in ("web", "worker-gpu", "worker-default"):
        service = compose["services"][name]
        mounts = dict(reversed(volume.split(":")[:2]) for volume in service["volumes"])
        environment = service["environment"]
        assert mounts[environment["MODEL_STORE"]] == "models", name
        assert mounts[environment["UPLOAD_ROOT"]] == "uploads", name
    assert {"models", "uploads"} <= set(compose["volumes"])


def test_postgres_and_redis_keep_their_data_in_named_volumes(compose):
    for name, path in (("postgres", "/var/lib/postgresql/data"), ("redis", "/data")):
        volumes = compose["services"][name]["volumes"]
        (volume,) = [v.split(":")[0] for v in volumes if v.split(":")[1] == path]
        assert volume in compose["volumes"], name


def test_the_cpu_override_drops_only_the_gpu_reservation(deploy):
    override = deploy.load("compose.cpu.yaml")
    assert list(override["services"]) == ["worker-gpu"]
    devices = override["services"]["worker-gpu"]["deploy"]["resources"]["reservations"]["devices"]
    assert isinstance(devices, deploy.Reset) and devices.value == []


def test_a_gpu_machine_uses_the_primarys_database_broker_and_nfs_storage(compose, deploy):
    shared = deploy.load("compose.shared.yaml")
    node = deploy.load("compose.gpu-node.yaml")
    primary = deploy.env["BIBI_PRIMARY_ADDRESS"]
    postgres = compose["services"]["postgres"]["environment"]
    environment = node["services"]["worker-gpu"]["environment"]
    database = urlsplit(environment["DATABASE_URL"])
    assert (database.hostname, database.port) == (primary, 5432)
    assert database.path.lstrip("/") == postgres["POSTGRES_DB"]
    assert (database.username, database.password) == (
        postgres["POSTGRES_USER"],
        postgres["POSTGRES_PASSWORD"],
    )
    broker = urlsplit(environment["REDIS_URL"])
    assert (broker.hostname, broker.port, broker.password) == (
        primary,
        6379,
        deploy.env["REDIS_PASSWORD"],
    )
    assert shared["services"]["postgres"]["ports"] == [f"{primary}:5432:5432"]
    assert shared["services"]["redis"]["ports"] == [f"{primary}:6379:6379"]
    for volume in ("models", "uploads"):
        options = shared["volumes"][volume]["driver_opts"]
        assert options["type"] == "nfs"
        assert options["device"] == f":{deploy.env['BIBI_NFS_EXPORT']}/{volume}"
        assert f"addr={deploy.env['BIBI_NFS_SERVER']}" in options["o"]


def test_the_test_services_are_the_images_of_the_deployment_where_the_suite_looks(compose, deploy):
    services = deploy.load("compose.test-services.yaml")["services"]
    assert set(services) == {"postgres", "redis"}
    for name in services:
        assert services[name]["image"] == compose["services"][name]["image"], name
        assert services[name]["healthcheck"]["test"], name
    assert services["postgres"]["ports"] == ["127.0.0.1:5432:5432"]
    assert services["redis"]["ports"] == ["127.0.0.1:6379:6379"]
    # The server the test settings default to: postgres://postgres@127.0.0.1:5432/test.
    environment = services["postgres"]["environment"]
    assert (environment["POSTGRES_USER"], environment["POSTGRES_DB"]) == ("postgres", "test")
    assert environment["POSTGRES_HOST_AUTH_METHOD"] == "trust"
    ensure = (deploy.root / "ensure-services.sh").read_text()
    assert 'docker compose -f "$here/compose.test-services.yaml" up -d postgres redis' in ensure


def test_every_compose_variable_is_listed_in_env_example(deploy):
    listed = set(re.findall(r"^([A-Z_]+)=", (deploy.root / "env.example").read_text(), re.M))
    used: set[str] = set()
    for path in deploy.root.glob("compose*.yaml"):
        used |= set(re.findall(r"(?<!\$)\$\{([A-Z_]+)", path.read_text()))
    # Only the test suite points compose at another settings file than deploy/.env.
    assert used - listed == {"BIBI_ENV_FILE"}


def test_the_image_copies_every_package_the_project_installs():
    import tomllib

    found = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    patterns = [p.rstrip("*") for p in found["packages"]["find"]["include"]]
    roots = [REPO_ROOT / where for where in found["packages"]["find"]["where"]]
    packages = {
        init.parent.name
        for root in roots
        for init in root.glob("*/__init__.py")
        if any(init.parent.name.startswith(p) for p in patterns)
    }
    assert packages >= {"bibi", "scoring", "fim_engine", "edits"}
    image = _image_files()
    for package in sorted(packages):
        inits = [place for place in image if place.parts[-2:] == (package, "__init__.py")]
        assert inits, f"the image lacks the package {package}: add a COPY line to the Dockerfile"


def test_web_runs_threaded_workers_from_the_config_the_image_copies(compose, deploy):
    words = deploy.words(compose["services"]["web"]["command"])
    config = _option(words, "--config", "-c")
    assert config, "web's gunicorn takes its settings from deploy/gunicorn.conf.py"
    cmd = re.findall(r"^CMD (\[.*\])$", DOCKERFILE.read_text(), re.M)[-1]
    assert f'"--config", "{config}"' in cmd, "the image's command uses the same settings"
    assert PurePosixPath(config) in _image_files(), f"{config} is not copied into the image"
    assert compose["services"]["web"]["environment"]["WEB_THREADS"]


def _gunicorn_settings(env: dict[str, str]) -> dict[str, object]:
    import os
    import subprocess
    import sys

    probe = (
        "import runpy, sys; s = runpy.run_path(sys.argv[1]); "
        "print(s['workers'], s['worker_class'], s['threads'], s['timeout'])"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe, str(REPO_ROOT / "deploy" / "gunicorn.conf.py")],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
    )
    return {"returncode": result.returncode, "out": result.stdout.split(), "err": result.stderr}


def test_the_gunicorn_config_reads_its_sizes_and_refuses_nonsense():
    assert _gunicorn_settings({"WEB_CONCURRENCY": "", "WEB_THREADS": ""})["out"] == [
        "3", "gthread", "8", "120"
    ]  # fmt: skip
    assert _gunicorn_settings({"WEB_CONCURRENCY": "2", "WEB_THREADS": "16"})["out"][:3] == [
        "2", "gthread", "16"
    ]  # fmt: skip
    for bad, why in (("eight", "whole number"), ("0", "between 1 and 256")):
        refused = _gunicorn_settings({"WEB_THREADS": bad})
        assert refused["returncode"] != 0
        assert "WEB_THREADS must be" in refused["err"] and why in refused["err"]
