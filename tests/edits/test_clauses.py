"""Clause shapes: where a label-changing edit reaches the sentence's whole claim.

The sentences are written for these tests in the shapes that the SST-2 dev sentences showed
(a subordinate clause, a relative clause, a "but" contrast, a phrase after a comma, ...).
"""

from __future__ import annotations

import pytest

from edits.clauses import clause_head, single_clause, verb_groups
from edits.words import split_words


def words(text: str) -> list[str]:
    return [word for word, _, _ in split_words(text)]


@pytest.mark.parametrize(
    "text",
    [
        "The acting is superb .",
        "The kids will love it .",
        "I loved it .",
        # Commas between adjectives make a list inside the clause.
        "The film is a charming , funny and moving story .",
        "It is a sad , mostly quiet , gentle film .",
        # Verbs in their base form share the auxiliary.
        "It will amuse and provoke adventurous adults .",
        # A participle after the head belongs to the predicate.
        "The cast is wasted on a script built around one joke .",
        # Hyphenated words are no dashes.
        "The story and structure are well-honed .",
        "A by-the-numbers effort .",
    ],
)
def test_one_clause_is_one_clause(text):
    assert single_clause(words(text))


@pytest.mark.parametrize(
    "text",
    [
        # Subordinators, and "that"/"like"/"as"/"than" before a subject.
        "The film works because the cast is superb .",
        "Although the plot is thin , the jokes land .",
        "The remake plays like it was shot in a weekend .",
        "It is as dull as it is long .",
        "The sequel is funnier than you might expect .",
        # Relative clauses, with and without a relative pronoun.
        "It is a film that never finds its footing .",
        "The jokes , which are stale , fall flat .",
        "It is the kind of movie it is easy to forget .",
        "A director the critics will adore has made a mess .",
        # Complement clauses and a second, present-tense verb.
        "It appears that something has been lost .",
        "You wonder why the sequel was made .",
        "The film explores grief with a light touch and is moving .",
        # Coordinated clauses, or verb phrases, with their own verb.
        "The film is funny and it is smart .",
        "The director has taken a fine cast and turned it into a bore .",
        "He put his heart into the first film and did n't save any for this one .",
        # Contrast.
        "The cast is great , but the plot is thin .",
        "The cast is great yet the plot is thin .",
        "It is not horrible , just horribly dull .",
        # Semicolons, colons, dashes and brackets.
        "The cast is great ; the plot is thin .",
        "The cast is great : the plot is thin .",
        "The cast is great -- the plot is thin .",
        "The cast is great — the plot is thin .",
        "The lead -lrb- a newcomer -rrb- is superb .",
        "The lead (a newcomer) is superb .",
        # A phrase set off by a comma keeps its own opinion.
        "At its best , the film is a delight .",
        "It is a cynical product , designed to sell toys .",
        "It is a gentle comedy , with some violent scenes .",
        "Every time you look , the hero is taking a wrong turn .",
        # More than one sentence, and a question.
        "It is funny . It is smart .",
        "Is the time ripe for another spy spoof ?",
    ],
)
def test_several_clauses_or_a_phrase_set_off_are_refused(text):
    assert not single_clause(words(text))


@pytest.mark.parametrize(
    ("text", "head"),
    [
        ("The kids will love it .", "will"),
        ("The cast has done a good job .", "has"),
        ("I did enjoy it .", "did"),
        ("The film is a charming , funny and moving story .", "is"),
        ("It will amuse and provoke adventurous adults .", "will"),
    ],
)
def test_the_head_is_the_auxiliary_of_the_only_clause(text, head):
    lowered = words(text)
    index = clause_head(lowered)
    assert index is not None and lowered[index] == head


@pytest.mark.parametrize(
    "text",
    [
        # No head: a main verb, a gerund, a group inside a clause after "that" or "than".
        "It has its flaws .",
        "The gimmick of being filmed in one take .",
        "A film that critics will love .",
        "It is more fun than the book was .",
        # "not" after the head would not deny the clause, or would not read as English.
        "There are plot holes everywhere .",
        "Few films have been this tender .",
        "Every frame is crafted with care .",
        "The kids will probably stay amused .",
        "This is pretty dull material .",
        "The cold open would 've been a better title .",
        "The film is uniformly excellent and relaxed .",
        "The jokes are as stale and as long as the plot .",
        "The second half is much weaker than the first .",
    ],
)
def test_no_head_where_not_would_not_deny_the_clause(text):
    assert clause_head(words(text)) is None


def test_verb_groups_take_clitics_and_leave_nouns_out():
    assert verb_groups(words("I 'll bet the game is more fun .")) == [1, 5]
    assert verb_groups(words("It wo n't do much .")) == [1]
    assert verb_groups(words("like a can of old soda")) == []
