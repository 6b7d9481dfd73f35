"""The baseline breaker on a span task (QA-SRL): the span cast's three starter items and one
tiny hosted QA model. Every pair is read back from the database and judged here again: its
answers are spans of its variant, an answer-keeping pair's answers are the original's words,
a guessed answer is stored unverified, and each claimed break is reproduced by a separate
forward pass of the model and the scoring library's rules."""

from __future__ import annotations

from io import StringIO

import pandas as pd
import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command

import fim_engine
import scoring
from bibi.baseline.breaker import MAX_TYPO_SHARE, baseline_breaker_run
from bibi.pairs.models import Pair
from bibi.pairs.validation import pairs_scored
from scoring.answers import answer_scores

from ..pairs.conftest import start_phase_now
from ..systems.span_cast import build_span_cast, upload_and_validate

pytestmark = [pytest.mark.embedded]


def right(answer, gold) -> bool:
    frame = pd.DataFrame(
        [("qa", 0, answer.text, answer.start, answer.end)],
        columns=["system", "item", "text", "start", "end"],
    )
    golds = pd.DataFrame(
        [(0, g["text"], g["start"], g["end"]) for g in gold],
        columns=["item", "text", "start", "end"],
    )
    return bool(answer_scores(frame, golds, mode="token_f1")["correct"].iloc[0])


def test_span_pairs_keep_or_guess_the_answer_and_their_breaks_are_reproduced(db, qa_dir):
    cast = build_span_cast()
    upload_and_validate(cast, qa_dir, name="qa")
    start_phase_now(cast.shared_task, "break")

    result = baseline_breaker_run(cast.shared_task, team_name="Strawman breaker", n=20)

    pairs = list(Pair.objects.filter(pair_set=result.pair_set).order_by("row"))
    assert pairs and len(pairs) == len(result.pairs) <= 20
    made = {(p.original_id, p.variant_text): p for p in result.pairs}
    assert {p.source for p in result.pairs} <= {"synonym", "name", "typo"}
    assert sum(p.source == "typo" for p in result.pairs) <= MAX_TYPO_SHARE * len(pairs)
    assert 0 < result.unverified < len(pairs), "both kinds are made around these items"
    model = fim_engine.load_span_system(qa_dir)
    for pair in pairs:
        original = pair.original
        assert pair.question == original.question and pair.original_answers == original.answers
        for answer in pair.variant_answers:
            assert pair.variant_text[answer["start"] : answer["end"]] == answer["text"]
        baseline = made[(original.external_id, pair.variant_text)]
        assert pair.label_unverified is baseline.label_unverified
        if pair.label_unverified:
            assert "Answer unverified" in pair.rationale
            assert [a["text"] for a in pair.variant_answers] != [
                a["text"] for a in original.answers
            ]
        else:  # the same words, moved by an edit outside them
            assert [a["text"] for a in pair.variant_answers] == [
                a["text"] for a in original.answers
            ]
        before, after = model.predict([pair.question] * 2, [original.text, pair.variant_text])
        broken = scoring.break_rule(
            right(before, original.answers), right(after, pair.variant_answers)
        )
        assert bool(baseline.broken) is bool(broken), pair.rationale

    # With validation off, scoring leaves out the pairs with a guessed answer.
    scored = {row["pair_id"] for row in pairs_scored(shared_task=cast.shared_task).unvalidated}
    assert scored == {pair.id for pair in pairs if not pair.label_unverified}

    # The command runs the same breaker again: the same pairs, as the team's next set.
    out = StringIO()
    call_command("baseline_breaker", "qasrl", "--team", "Strawman breaker", "--n", "20", stdout=out)
    assert f"{len(pairs)} pairs around" in out.getvalue()
    assert f"{result.unverified} pairs carry a guessed answer" in out.getvalue()


def test_a_span_task_without_a_ready_hosted_system_is_refused(db):
    cast = build_span_cast()
    start_phase_now(cast.shared_task, "break")

    with pytest.raises(ValidationError, match="no ready hosted system"):
        baseline_breaker_run(cast.shared_task, team_name="Strawman breaker", n=5)
