"""The `>>>` examples in the library's docstrings run and give what they show."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import edits

MODULES = ["edits", *sorted(info.name for info in pkgutil.walk_packages(edits.__path__, "edits."))]


@pytest.mark.parametrize("name", MODULES)
def test_the_examples_of_each_module_hold(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)

    assert result.failed == 0


def test_the_examples_are_not_an_empty_promise():
    attempted = sum(doctest.testmod(importlib.import_module(name)).attempted for name in MODULES)

    assert attempted >= 20
