"""Tiny hand-written inputs for the scoring tests, as fixtures (tests import no helpers)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "scoring"

Row = tuple[str, str, object, str, object]


def make_pairs(*rows: Row, tags: list[str] | None = None) -> pd.DataFrame:
    """Pairs from (team, original_text, original_label, variant_text, variant_label) rows;
    pair ids count from 1 and an original's id is its text."""
    frame = pd.DataFrame(
        rows,
        columns=["team", "original_text", "original_label", "variant_text", "variant_label"],
    )
    frame.insert(0, "pair_id", range(1, len(rows) + 1))
    frame.insert(2, "original_id", frame["original_text"])
    if tags is not None:
        frame["tags"] = tags
    return frame


def make_predictions(by_system: dict[str, dict[str, object]], **columns: dict) -> pd.DataFrame:
    """Predictions from {system: {text: label}}; extra columns as {system: {text: value}}."""
    rows = [
        {"system": system, "text": text, "label": label}
        | {name: values[system][text] for name, values in columns.items()}
        for system, labels in by_system.items()
        for text, label in labels.items()
    ]
    return pd.DataFrame(rows)


@pytest.fixture(name="make_pairs")
def make_pairs_fixture():
    return make_pairs


@pytest.fixture(name="make_predictions")
def make_predictions_fixture():
    return make_predictions


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture
def overview_2017() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The seven sample pairs (Table 3) and six systems' predictions (Table 4) of the 2017
    overview paper, as read from the fixture files."""
    from scoring import read_pairs, read_predictions

    return (
        read_pairs(FIXTURES / "overview_2017_pairs.tsv"),
        read_predictions(FIXTURES / "overview_2017_predictions.tsv"),
    )
