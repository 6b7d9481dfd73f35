"""WordNet 3.0 from Debian's wordnet-base files, read offline."""

from __future__ import annotations

import pytest

from edits.errors import WordNetMissingError
from edits.wordnet import DEFAULT_WORDNET_DIR, WORDNET_DIR_ENV, load_wordnet, wordnet_dir


@pytest.fixture(scope="module")
def wordnet():
    return load_wordnet()


def words(lexicals) -> list[str]:
    return [lexical.word for lexical in lexicals]


def test_a_directory_without_wordnet_files_is_a_clear_error(tmp_path):
    with pytest.raises(WordNetMissingError, match="wordnet-base") as raised:
        load_wordnet(tmp_path)
    assert str(tmp_path) in str(raised.value) and "data.noun" in str(raised.value)


def test_the_environment_variable_names_the_directory(tmp_path, monkeypatch):
    monkeypatch.setenv(WORDNET_DIR_ENV, str(tmp_path))
    assert wordnet_dir() == tmp_path
    with pytest.raises(WordNetMissingError, match=WORDNET_DIR_ENV):
        load_wordnet()
    monkeypatch.delenv(WORDNET_DIR_ENV)
    assert wordnet_dir() == DEFAULT_WORDNET_DIR


def test_antonyms_are_direct_only(wordnet):
    assert words(wordnet.antonyms("good")) == ["bad"]
    # "terrific" has no antonym of its own: the antonyms of its head adjectives are not given.
    assert wordnet.antonyms("terrific") == []
    assert "last" not in words(wordnet.antonyms("original", senses=5))


def test_related_lemmas_are_first_senses_of_both_words(wordnet):
    related = words(wordnet.related("film", "n", "synonym"))
    assert related[0] == "movie" and "picture" not in related and "cinema" not in related
    assert words(wordnet.related("good", "a", "antonym")) == ["bad"]
    assert words(wordnet.related("love", "v", "antonym")) == ["hate"]
    # "steal" the noun is a bargain: the verb has no such synonym.
    assert "buy" in words(wordnet.related("steal", "n", "synonym"))
    assert wordnet.related("steal", "v", "synonym") == []
    with pytest.raises(ValueError, match="unknown relation"):
        wordnet.related("film", "n", "hypernym")


def test_synonyms_come_from_the_most_frequent_senses_of_the_dominant_part_of_speech(wordnet):
    synonyms = words(wordnet.synonyms("film"))
    assert synonyms[:2] == ["movie", "picture"]
    # "boring" is an adjective before it is a form of the verb "bore".
    assert "tedious" in words(wordnet.synonyms("boring"))
    assert "drill" not in words(wordnet.synonyms("boring", senses=10))
    assert "good" not in words(wordnet.synonyms("good"))


def test_a_plural_noun_gets_plural_synonyms_and_other_inflections_none(wordnet):
    assert words(wordnet.synonyms("films"))[:2] == ["movies", "pictures"]
    assert words(wordnet.synonyms("stories"))[0] == "narratives"
    assert wordnet.synonyms("walked") == []


def test_particular_people_are_no_senses_to_substitute(wordnet):
    assert wordnet.synonyms("moore") == []
    assert wordnet.person("russell") is not None
    assert wordnet.person("hope") is None and wordnet.is_person("hope")
    assert wordnet.person("film") is None and not wordnet.is_person("film")


def test_unknown_words_have_nothing(wordnet):
    assert wordnet.synonyms("zzxq") == [] and wordnet.antonyms("zzxq") == []
