"""Negation is claimed to change the label only where the clause supports it (issue 32, point 4);
elsewhere it is a probe that claims no label, or nothing when it would read badly."""

from __future__ import annotations

import pytest

from edits.perturbations import negation_edits


@pytest.mark.parametrize(
    "text",
    [
        # The issue's examples, made: "... is not cranked up somewhere between stylish and
        # proudly stupid." (opinions of both signs), "not uniformly superb" (a degree).
        "The movie is cranked up somewhere between stylish and proudly stupid .",
        "The performances are uniformly superb .",
        "The performances are n't uniformly superb .",
        # An opinion in a phrase of its own, or ahead of the verb agreeing with the predicate.
        "Kids should have a stirring time at this beautifully drawn movie .",
        "This gorgeous epic is guaranteed to lift the spirits .",
        "This beautifully animated epic is never dull .",
        # A removal leaving an opinion in a phrase of its own (tuning set, issue 32).
        "The film does n't sustain its promise with a terrible ending .",
        # A list after a verb; a comparative or an idiom after a removed negation.
        "Woody Allen can write and deliver a one liner as well as anybody .",
        "The film has never looked uglier .",
        "One can not deny its quality .",
        "The film was better than Saving Private Ryan .",
    ],
)
def test_a_negation_the_clause_does_not_support_is_a_probe(text):
    assert negation_edits(text) == []
    (probe,) = negation_edits(text, probes=True)
    assert probe.probe and probe.kind == "probe"
    assert "claims no label" in probe.rationale and "meant to change" not in probe.rationale


@pytest.mark.parametrize(
    "text",
    [
        # An inverted clause: "So concerned is not the film with ...".
        "So concerned is the film with its message that it forgets to be funny .",
        "So concerned is the film with its message .",
        # Removals leaving a word that needs the negation, or a disjunction.
        "I did n't find it spellbinding at all .",
        "Predictable farce is n't very funny or original .",
        "It does n't do much .",
        "I have n't laughed that hard in years !",
        "A series of shots does n't make for much of a movie .",
        # A negation in a relative clause.
        "Labute balances stories in a manner that never overwhelms the other .",
        # No subject before the verb.
        "Does n't go far enough in its humor .",
        "Is funny .",
    ],
)
def test_a_negation_that_reads_badly_is_not_made(text):
    assert negation_edits(text, probes=True) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Paul Bettany is cool .", "Paul Bettany is not cool ."),
        (
            "A SKATER IS PERFORMING A DANGEROUS TRICK .",
            "A SKATER IS NOT PERFORMING A DANGEROUS TRICK .",
        ),
        ("The movie is n't a dud .", "The movie is a dud ."),
        ("Their work is fantastic .", "Their work is not fantastic ."),
        # Do-support goes with its negation: no emphatic "did find", "does do".
        ("I did not enjoy it .", "I enjoyed it ."),
        ("The film does n't work .", "The film works ."),
        ("Do n't see this film .", "See this film ."),
        (
            "The film is a charming , funny and moving story .",
            "The film is not a charming , funny and moving story .",
        ),
    ],
)
def test_good_negations_are_still_made_and_claim_the_other_label(text, expected):
    (edit,) = negation_edits(text)
    assert edit.text == expected and edit.kind == "changes" and not edit.probe
    assert edit.edit.apply(text) == expected
    assert negation_edits(text) == negation_edits(text)
