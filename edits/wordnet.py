"""WordNet 3.0, read offline from Debian's ``wordnet-base`` files with nltk's corpus reader.

The files live in ``/usr/share/wordnet`` (``apt-get install wordnet-base``; ``make install``
does it) or in the directory named by the environment variable ``BIBI_WORDNET_DIR``. Nothing is
downloaded: a missing directory raises :class:`edits.errors.WordNetMissingError` saying
what to install.

Two gaps between Debian's files and what nltk's reader opens are bridged here: Debian ships no
``lexnames`` file (the 45 lexicographer file names of WordNet 3.0, listed in ``lexnames(5WN)``,
are written below), and the reader's mapping to other WordNet versions (for the Open
Multilingual WordNet, which bibi does not use) is switched off.

Which senses count. Without a part-of-speech tagger, a word's senses are those of its
*dominant part of speech* (the one whose senses of the word have the highest total frequency
in WordNet's sense-tagged counts, then the most senses), ranked by frequency; ``senses`` of them
are used (the most-frequent-sense rule).

This module does not import torch.

Example:
    >>> wordnet = load_wordnet()
    >>> [lexical.word for lexical in wordnet.synonyms("movie")]
    ['film', 'picture', 'moving_picture', ...]
"""

from __future__ import annotations

import io
import os
import threading
import warnings
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from edits.errors import WordNetMissingError

WORDNET_DIR_ENV = "BIBI_WORDNET_DIR"
DEFAULT_WORDNET_DIR = Path("/usr/share/wordnet")
# The files nltk's reader opens when it starts (index.sense and cntlist are read later, or not).
REQUIRED_FILES = tuple(
    f"{kind}.{pos}" for kind in ("index", "data") for pos in ("noun", "verb", "adj", "adv")
) + tuple(f"{pos}.exc" for pos in ("noun", "verb", "adj", "adv"))
LEXNAMES = [
    "adj.all",
    "adj.pert",
    "adv.all",
    "noun.Tops",
    "noun.act",
    "noun.animal",
    "noun.artifact",
    "noun.attribute",
    "noun.body",
    "noun.cognition",
    "noun.communication",
    "noun.event",
    "noun.feeling",
    "noun.food",
    "noun.group",
    "noun.location",
    "noun.motive",
    "noun.object",
    "noun.person",
    "noun.phenomenon",
    "noun.plant",
    "noun.possession",
    "noun.process",
    "noun.quantity",
    "noun.relation",
    "noun.shape",
    "noun.state",
    "noun.substance",
    "noun.time",
    "verb.body",
    "verb.change",
    "verb.cognition",
    "verb.communication",
    "verb.competition",
    "verb.consumption",
    "verb.contact",
    "verb.creation",
    "verb.emotion",
    "verb.motion",
    "verb.perception",
    "verb.possession",
    "verb.social",
    "verb.stative",
    "verb.weather",
    "adj.ppl",
]
POS_NAMES = {"n": "noun", "v": "verb", "a": "adjective", "s": "adjective", "r": "adverb"}
_DEFINITION_IN_RATIONALE = 60


@dataclass(frozen=True)
class Lexical:
    """A word WordNet relates to another: the related ``word`` (multiword lemmas keep their
    underscores) and a short ``note`` on the sense, for a rationale string."""

    word: str
    note: str


def wordnet_dir() -> Path:
    """``$BIBI_WORDNET_DIR``, or Debian's ``/usr/share/wordnet``."""
    return Path(os.environ.get(WORDNET_DIR_ENV) or DEFAULT_WORDNET_DIR)


def load_wordnet(path: str | Path | None = None) -> WordNet:
    """The WordNet of ``path`` (default :func:`wordnet_dir`), loaded once per directory.

    Raises:
        WordNetMissingError: the directory lacks the WordNet 3.0 database files.
    """
    return _load(str(Path(path) if path is not None else wordnet_dir()))


@lru_cache(maxsize=4)
def _load(path: str) -> WordNet:
    return WordNet(Path(path))


class WordNet:
    """Synonyms, antonyms and person names from WordNet 3.0 (see the module docstring)."""

    def __init__(self, root: Path) -> None:
        missing = [name for name in REQUIRED_FILES if not (root / name).is_file()]
        if missing:
            raise WordNetMissingError(
                f"WordNet 3.0 files not found in {root} (missing {', '.join(missing[:4])}"
                f"{' and more' if len(missing) > 4 else ''}): install Debian's wordnet-base "
                f"(apt-get install wordnet-base, which `make install` runs) or set "
                f"{WORDNET_DIR_ENV} to a directory that holds data.noun, index.noun, ..."
            )
        self.root = root
        self._reader = _open_reader(root)
        # nltk's reader fills caches lazily and is not safe to share between threads.
        self._lock = threading.Lock()
        # nltk reads a lemma's sense-tagged count by a binary search of cntlist.rev on disk at
        # every call, the hot spot of ranking senses (figures: platform/bibi/baseline/README.md),
        # so counts and rankings are kept per lemma and word form, under the lock.
        self._counts: dict[tuple[str, str], int] = {}
        self._rankings: dict[tuple[str, str], list[tuple[Any, Any]]] = {}

    def synonyms(self, word: str, *, senses: int = 2) -> list[Lexical]:
        """Words for the word's ``senses`` most frequent senses, most frequent sense first: the
        other lemmas of each sense, then for adjectives the lemmas of the senses WordNet marks
        as similar (*good* → *superb*, *satisfactory*). In the word's own inflection (below)."""
        found: dict[str, Lexical] = {}
        with self._lock:
            for sense in self._senses(word, senses):
                related = [(sense.synset, "")]
                if sense.synset.pos() in ("a", "s"):
                    related += [(s, "similar; ") for s in sense.synset.similar_tos()]
                for synset, kind in related:
                    for lemma in synset.lemmas():
                        form = sense.inflect(lemma.name())
                        if form.lower() != word.lower() and form not in found:
                            found[form] = Lexical(form, kind + _note(synset))
        return list(found.values())

    def antonyms(self, word: str, *, senses: int = 1) -> list[Lexical]:
        """Direct antonyms of the word's lemma in its ``senses`` most frequent senses (*good* →
        *bad*). WordNet's "indirect antonyms" (the antonyms of the head adjective a satellite is
        similar to: *terrific* → *bad* through *good*, *original* → *last* through *first*) are
        not given: most of them are wrong in a sentence."""
        found: dict[str, Lexical] = {}
        with self._lock:
            for sense in self._senses(word, senses):
                for antonym in sense.lemma.antonyms():
                    form = sense.inflect(antonym.name())
                    found.setdefault(form, Lexical(form, _note(sense.synset)))
        return list(found.values())

    def related(
        self,
        lemma: str,
        pos: str,
        relation: str,
        *,
        senses: int = 1,
        substitute_senses: int = 2,
        frames: frozenset[int] | None = None,
    ) -> list[Lexical]:
        """Base-form lemmas related to ``lemma`` in WordNet part of speech ``pos`` (``n``,
        ``v``, ``a``, ``r``): ``relation`` ``"synonym"`` gives the other lemmas of its ``senses``
        most frequent senses, ``"antonym"`` their direct antonyms. A related lemma is kept only
        when the sense that relates it is among its own ``substitute_senses`` most frequent
        senses of ``pos`` (*film* → *movie*, not *picture*, which is first an image).
        ``frames`` (verbs): WordNet verb frame numbers the context needs (9, "Somebody ----s
        somebody", for *tells us*); a sense is used only when ``lemma`` has one of them in it,
        and a related lemma kept only when it has one too (*tells us* → not *says us*).

        Example:
            >>> wordnet = load_wordnet()
            >>> [lexical.word for lexical in wordnet.related("film", "n", "synonym")]
            ['movie', 'moving_picture', 'moving-picture_show', 'motion_picture', ...]
        """
        if relation not in ("synonym", "antonym"):
            raise ValueError(f"unknown relation {relation!r}: 'synonym' or 'antonym'")
        found: dict[str, Lexical] = {}
        with self._lock:
            for synset, own in self._ranked(lemma, pos)[:senses]:
                if frames is not None and not frames.intersection(own.frame_ids()):
                    continue  # the word is not used in this sense here
                if relation == "synonym":
                    pairs = [(other, synset) for other in synset.lemmas() if other != own]
                else:
                    pairs = [(other, other.synset()) for other in own.antonyms()]
                for other, sense in pairs:
                    name = other.name()
                    if name.lower() == lemma.lower() or name in found:
                        continue
                    if frames is not None and not frames.intersection(other.frame_ids()):
                        continue
                    top = [s for s, _ in self._ranked(name, pos)[:substitute_senses]]
                    if sense in top:
                        found[name] = Lexical(name, _note(synset))
        return list(found.values())

    def _ranked(self, lemma: str, pos: str) -> list[tuple[Any, Any]]:
        """``(synset, the lemma's entry in it)`` for the senses of ``lemma`` (its base form,
        exactly) in ``pos``, most frequent first (WordNet's order breaks ties); no instances.
        Computed once per lemma and part of speech (callers hold the lock)."""
        wanted = lemma.lower()
        known = self._rankings.get((wanted, pos))
        if known is not None:
            return known
        ranked = []
        for order, synset in enumerate(self._reader.synsets(wanted, pos=pos)):
            entry = next((x for x in synset.lemmas() if x.name().lower() == wanted), None)
            if entry is None or synset.instance_hypernyms():
                continue
            ranked.append((-self._count(entry), order, synset, entry))
        ranked.sort(key=lambda item: (item[0], item[1]))
        found = [(synset, entry) for _, _, synset, entry in ranked]
        self._rankings[(wanted, pos)] = found
        return found

    def _count(self, lemma: Any) -> int:
        """The lemma's sense-tagged count (``cntlist.rev``), read once (callers hold the lock)."""
        key = (lemma.synset().name(), lemma.name())
        count = self._counts.get(key)
        if count is None:
            count = self._counts[key] = lemma.count()
        return count

    def is_compound(self, word: str, following: str) -> bool:
        """Whether WordNet has ``word following`` as one lemma (*special effects*)."""
        with self._lock:
            joined = f"{word}_{following}".lower()
            return bool(self._reader.synsets(joined))

    def is_adjective(self, word: str) -> bool:
        """Whether WordNet has the form itself as an adjective (*charming*, *moving*)."""
        with self._lock:
            return bool(self._ranked(word, "a"))

    def person(self, word: str) -> Lexical | None:
        """The person the word names, when it can only be a name.

        A word is a name here when every WordNet sense of it is an instance (a particular
        person, place, ...) and one of them a person: *polanski*, *russell*; not *hope* or
        *bush*, which are common nouns too. Capitalisation is the caller's evidence to add.
        """
        with self._lock:
            synsets = self._reader.synsets(word.lower(), pos="n")
            if not synsets or not all(s.instance_hypernyms() for s in synsets):
                return None
            people = [s for s in synsets if s.lexname() == "noun.person"]
            return Lexical(word, _note(people[0])) if people else None

    def has_common_sense(self, word: str) -> bool:
        """Whether some WordNet sense of the word, in any part of speech, is not a particular
        person, place, ... (*titanic* is an adjective too; *spielberg* is only a person)."""
        with self._lock:
            return any(not s.instance_hypernyms() for s in self._reader.synsets(word.lower()))

    def is_place(self, word: str) -> bool:
        """Whether some WordNet sense of the word is a particular place (*Kent*, *Paris*)."""
        with self._lock:
            return any(
                s.instance_hypernyms() and s.lexname() == "noun.location"
                for s in self._reader.synsets(word.lower(), pos="n")
            )

    def is_person(self, word: str) -> bool:
        """Whether some WordNet sense of the word is a particular person (*Hope*, *Bush*)."""
        with self._lock:
            return any(
                s.instance_hypernyms() and s.lexname() == "noun.person"
                for s in self._reader.synsets(word.lower(), pos="n")
            )

    def _senses(self, word: str, senses: int) -> list[_Sense]:
        """The ``senses`` most frequent senses of the word's dominant part of speech.

        Parts of speech in which the word is its own lemma come first (*boring* is an
        adjective before it is a form of *bore*); a plural noun (*films*) is used only when
        no part of speech has the word as its lemma. Particular people, places, ... (instances)
        are no senses to substitute in.
        """
        lowered = word.lower()
        by_pos: dict[str, list[tuple[int, int, _Sense]]] = {}
        for order, synset in enumerate(self._reader.synsets(lowered)):
            if synset.instance_hypernyms():
                continue
            pos = "a" if synset.pos() == "s" else synset.pos()
            base = str(self._reader.morphy(lowered, pos) or lowered)
            lemma = next((x for x in synset.lemmas() if x.name().lower() == base), None)
            if lemma is None:
                continue
            if base == lowered:
                plural = False
            elif pos == "n" and lowered == _plural(base):
                plural = True
            else:
                continue
            sense = _Sense(synset, lemma, plural)
            by_pos.setdefault(pos, []).append((self._count(lemma), order, sense))
        if not by_pos:
            return []
        dominant = max(
            by_pos.values(),
            key=lambda found: (
                not found[0][2].plural,
                sum(count for count, _, _ in found),
                len(found),
            ),
        )
        ranked = sorted(dominant, key=lambda entry: (-entry[0], entry[1]))
        return [sense for _, _, sense in ranked[:senses]]


@dataclass(frozen=True)
class _Sense:
    synset: Any
    lemma: Any
    plural: bool

    def inflect(self, lemma_name: str) -> str:
        """A related lemma in the form of the word looked up (plural when it was plural)."""
        return _plural(lemma_name) if self.plural else lemma_name


def _plural(noun: str) -> str:
    """Regular English plural, enough for substitutions (*film* → *films*, *story* →
    *stories*); irregular plurals come out regular."""
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and len(noun) > 1 and noun[-2] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"


def _note(synset: Any) -> str:
    # The first clause of the gloss: later ones are often leftovers of quoted examples.
    definition = synset.definition().split(";")[0].strip()
    if len(definition) > _DEFINITION_IN_RATIONALE:
        definition = definition[: _DEFINITION_IN_RATIONALE - 1] + "…"
    return f"{POS_NAMES[synset.pos()]}: {definition}"


def _open_reader(root: Path) -> Any:
    import nltk.data
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class DebianWordNetReader(WordNetCorpusReader):
        def open(self, file: str) -> Any:
            if file == "lexnames":
                return io.StringIO(
                    "".join(f"{i:02d}\t{name}\t0\n" for i, name in enumerate(LEXNAMES))
                )
            return super().open(file)

        def map_wn(self, version: str = "wordnet") -> None:
            return None

    # nltk opens corpus files only under the directories of its data path.
    resolved = str(root.resolve())
    if resolved not in nltk.data.path:
        nltk.data.path.append(resolved)
    with warnings.catch_warnings():
        # "The multilingual functions are not available": bibi reads English WordNet only.
        warnings.simplefilter("ignore", UserWarning)
        return DebianWordNetReader(resolved, None)
