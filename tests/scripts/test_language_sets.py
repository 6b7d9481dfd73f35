"""The pre-registered split of tuning and sealed sentences (scripts/language_sets.py)."""

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "language_sets.py"
spec = importlib.util.spec_from_file_location("language_sets", SCRIPT)
assert spec is not None and spec.loader is not None
language_sets = importlib.util.module_from_spec(spec)
spec.loader.exec_module(language_sets)


def test_a_sentence_has_one_side_whatever_file_it_comes_from():
    text = "a stirring , funny and finally transporting re-imagining"
    assert language_sets.side(text) == language_sets.side(text)
    assert language_sets.side(text) in {"tune", "sealed"}


def test_the_split_is_about_even_and_fixed():
    sides = [language_sets.side(f"sentence number {i}") for i in range(2000)]
    assert 900 < sides.count("sealed") < 1100
    # The split is pre-registered: a change of key or rule would move these.
    assert sides[:8] == ["tune", "tune", "tune", "sealed", "sealed", "sealed", "tune", "tune"]
