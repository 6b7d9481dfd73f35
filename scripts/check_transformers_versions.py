"""Run fim_engine's tests under the lowest and the highest transformers release that the pin in
pyproject.toml admits: ``fim_engine/bert_pass.py`` walks transformers' attribute paths and
ATen kernels, so a release the pin admits but nobody ran may break it (it then falls back to
autograd with a warning, slower but exact; this says whether it does).

    .venv/bin/python scripts/check_transformers_versions.py             # `make check-transformers`
    .venv/bin/python scripts/check_transformers_versions.py --version 5.25.0 -- -x -q

The versions are the pin's lower bound and the newest release below its upper bound that the
package registry offers (``pip index versions transformers``), or those given with
``--version``. A version other than the installed one is installed once into
``var/transformers/<version>/`` (``pip install --target``, numpy held at the installed
version; about 250 MB) and put first on ``PYTHONPATH``; the script checks that the tests import
that version, then runs ``pytest tests/fim_engine`` (slow tests included; arguments after
``--`` go to pytest). Needs the registry for a version not yet in ``var/``. Exits 1 when a run
fails, and prints one line per version.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
OVERLAYS = ROOT / "var" / "transformers"


def pin_bounds(pyproject: str) -> tuple[Version, Version]:
    """``(lowest, upper)`` of the ``transformers>=lowest,<upper`` requirement in pyproject.toml."""
    dependencies = tomllib.loads(pyproject)["project"]["dependencies"]
    for requirement in dependencies:
        found = re.fullmatch(r"transformers>=([\w.]+),<([\w.]+)", requirement.replace(" ", ""))
        if found:
            return Version(found.group(1)), Version(found.group(2))
    raise ValueError("pyproject.toml has no 'transformers>=LOW,<HIGH' requirement")


def newest_below(upper: Version) -> Version:
    """The newest final release of transformers below ``upper`` that the registry offers."""
    listing = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", "transformers"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    offered = re.search(r"Available versions: (.*)", listing)
    if offered is None:
        raise RuntimeError(f"pip index versions gave no list:\n{listing}")
    versions = [Version(v.strip()) for v in offered.group(1).split(",")]
    return max(v for v in versions if v < upper and not v.is_prerelease)


def overlay(version: Version) -> Path | None:
    """A directory holding ``transformers==version`` (installed once), or None when the
    environment's own transformers is that version."""
    import numpy
    import transformers

    if Version(transformers.__version__) == version:
        return None
    target = OVERLAYS / str(version)
    if not (target / "transformers").is_dir():
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--target", str(target)]
            + [f"transformers=={version}", f"numpy=={numpy.__version__}"],
            check=True,
        )
    return target


def run(version: Version, pytest_args: list[str]) -> bool:
    """The tests under ``version``; True when they pass."""
    env = dict(os.environ)
    target = overlay(version)
    if target is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(target), env.get("PYTHONPATH")]))
    imported = subprocess.run(
        [sys.executable, "-c", "import transformers; print(transformers.__version__)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if Version(imported) != version:
        print(f"transformers {version}: the tests would import {imported}; not run")
        return False
    command = [sys.executable, "-m", "pytest", "tests/fim_engine", *pytest_args]
    result = subprocess.run(command, cwd=ROOT, env=env)
    print(f"transformers {version}: {'passed' if result.returncode == 0 else 'FAILED'}")
    return result.returncode == 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="append", type=Version, help="instead of the pin's")
    parser.add_argument("pytest_args", nargs="*", help="after --: passed to pytest")
    args = parser.parse_args(argv)
    if args.version:
        versions = args.version
    else:
        lowest, upper = pin_bounds((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
        versions = [lowest, newest_below(upper)]
    results = [
        run(version, args.pytest_args or ["-q", "-p", "no:cacheprovider"]) for version in versions
    ]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
