"""The transformers pin in pyproject.toml is what scripts/check_transformers_versions.py tests,
and the installed release lies inside it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import transformers
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]


def load_script():
    spec = importlib.util.spec_from_file_location(
        "check_transformers_versions", ROOT / "scripts" / "check_transformers_versions.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_installed_transformers_lies_inside_the_pin():
    lowest, upper = load_script().pin_bounds((ROOT / "pyproject.toml").read_text())
    assert lowest <= Version(transformers.__version__) < upper


def test_the_pin_is_read_from_the_requirement():
    script = load_script()
    text = '[project]\ndependencies = ["torch==2.13.0", "transformers >= 5.0, < 5.25"]\n'
    assert script.pin_bounds(text) == (Version("5.0"), Version("5.25"))
    with pytest.raises(ValueError, match="no 'transformers>=LOW,<HIGH'"):
        script.pin_bounds('[project]\ndependencies = ["transformers"]\n')
