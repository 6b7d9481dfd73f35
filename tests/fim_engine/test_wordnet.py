"""WordNet 3.0 from Debian's wordnet-base files, read offline."""

from __future__ import annotations

import pytest

from fim_engine.errors import WordNetMissingError
from fim_engine.wordnet import DEFAULT_WORDNET_DIR, WORDNET_DIR_ENV, load_wordnet, wordnet_dir


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


def test_antonyms_are_direct_and_indirect(wordnet):
    assert "bad" in words(wordnet.antonyms("good"))
    # "terrific" has no antonym of its own; its head adjectives do.
    indirect = wordnet.antonyms("terrific")
    assert indirect and all("indirect, through" in lexical.note for lexical in indirect)


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
