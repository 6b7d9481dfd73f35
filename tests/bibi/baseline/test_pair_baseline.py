"""The baseline breaker on a sentence-pair task (NLI): edits of the texts the task lets
breakers edit, each pair checked again by the type's rules, labels by construction as
``edits.claims`` says them, and breaks judged here again on the model loaded afresh."""

from __future__ import annotations

import pytest

import fim_engine
from bibi.baseline.breaker import baseline_breaker_run
from bibi.pairs.models import Pair
from bibi.sharedtasks.models import Example
from bibi.tasktypes import SENTENCE_PAIRS
from bibi.tasktypes.rules import PairInput, PairRules, StarterExample
from edits.claims import changed_label

from ..nlicast import build_nli_task

pytestmark = [pytest.mark.embedded]

KEEPS = {"synonym", "name", "typo"}
CHANGES = {"antonym", "negation"}


def stored_pairs(cast, result) -> list[Pair]:
    return list(Pair.objects.filter(pair_set=result.pair_set).select_related("original"))


def assert_checked_again_and_breaks_reproduced(cast, result, model_dir):
    shared_task = cast.shared_task
    pairs = stored_pairs(cast, result)
    assert 0 < len(pairs) == len(result.pairs)
    rules = PairRules.for_shared_task(shared_task)
    starter = SENTENCE_PAIRS.starter_index(
        StarterExample.of(e) for e in Example.objects.filter(dataset=cast.starter)
    )
    for pair in pairs:
        checked, problems = SENTENCE_PAIRS.check_pair(
            PairInput(
                row=pair.row,
                original_id=pair.original.external_id,
                variant_text=pair.variant_text,
                variant_text_b=pair.variant_text_b,
                variant_label=pair.variant_label,
                rationale=pair.rationale,
                tags=tuple(pair.tags),
            ),
            starter=starter,
            rules=rules,
        )
        assert checked is not None, (pair.variant_text, pair.variant_text_b, problems)
        # One text edited, the other the original's.
        edited = [
            field
            for field in ("text", "text_b")
            if getattr(pair, f"variant_{field}") != getattr(pair, f"original_{field}")
        ]
        assert len(edited) == 1 and edited[0] in SENTENCE_PAIRS.editable_fields(
            shared_task.editable_text
        )
    model = fim_engine.load_system(model_dir)
    originals = model.predict([(p.original_text, p.original_text_b) for p in pairs]).labels
    variants = model.predict([(p.variant_text, p.variant_text_b) for p in pairs]).labels
    broken = {
        (p.variant_text, p.variant_text_b)
        for p, on_original, on_variant in zip(pairs, originals, variants, strict=True)
        if (on_original == p.original_label) != (on_variant == p.variant_label)
    }
    assert {(m.variant_text, m.variant_text_b) for m in result.pairs if m.broken} == broken
    return pairs


def test_on_three_labels_it_edits_the_hypothesis_and_makes_label_keeping_pairs_only(db, tmp_path):
    cast, _ = build_nli_task(tmp_path)

    result = baseline_breaker_run(cast.shared_task, team_name="Strawman breaker", n=20)

    pairs = assert_checked_again_and_breaks_reproduced(
        cast, result, tmp_path / "agreement-pair-bow"
    )
    assert all(p.variant_text == p.original_text for p in pairs)
    # A label change claims no label on a three-label set (edits.claims): none is made.
    assert {made.source for made in result.pairs} <= KEEPS
    assert all(p.variant_label == p.original_label and not p.label_unverified for p in pairs)
    assert result.breaking > 0


def test_with_both_texts_editable_each_pair_edits_one_of_them(db, tmp_path):
    cast, _ = build_nli_task(tmp_path, editable_text="both")

    result = baseline_breaker_run(cast.shared_task, team_name="Strawman breaker", n=20)

    pairs = assert_checked_again_and_breaks_reproduced(
        cast, result, tmp_path / "agreement-pair-bow"
    )
    assert any(p.variant_text != p.original_text for p in pairs)
    assert any(p.variant_text_b != p.original_text_b for p in pairs)


def test_on_two_labels_label_changing_pairs_claim_the_other_label_unverified(db, tmp_path):
    labels = ("contradiction", "entailment")
    cast, _ = build_nli_task(tmp_path, labels=labels)

    result = baseline_breaker_run(cast.shared_task, team_name="Strawman breaker", n=20)

    pairs = assert_checked_again_and_breaks_reproduced(
        cast, result, tmp_path / "agreement-pair-bow"
    )
    by_variant = {(p.variant_text, p.variant_text_b): p for p in pairs}
    changing = [m for m in result.pairs if m.source in CHANGES]
    assert changing, [m.source for m in result.pairs]
    for made in result.pairs:
        pair = by_variant[(made.variant_text, made.variant_text_b)]
        assert pair.label_unverified is made.label_unverified is (made.source in CHANGES)
        if made.source in CHANGES:
            assert pair.variant_label == changed_label(pair.original_label, labels)
            assert "Label unverified" in pair.rationale
        else:
            assert pair.variant_label == pair.original_label
    assert result.unverified == len(changing)
