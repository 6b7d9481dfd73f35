"""What a text is to bibi: when two texts are the same, and what a text may hold.

``normalize_text`` is the one comparison rule every app uses: the example importer finds
duplicate texts in a dataset with it, and the pair checks find a pair's original in the
starter set with it, so a text the importer calls a duplicate is exactly a text the pair
checks cannot tell apart.

    >>> normalize_text("  Cafe\\u0301\\tcrème \\n brûlée  ")
    'Café crème brûlée'

``text_problems`` says which characters and words bibi refuses in pairs and imported
examples. A minimal pair must differ in what a reader sees. An edit nobody can see (a
zero-width space, a soft hyphen, a right-to-left override, a Cyrillic "о" inside an English
word) changes what a model reads without changing the sentence, so it makes no pair; in a
starter set the same characters would make originals that look identical but are not. The
pair checks and the example importer both ask this module, so the rule is the same for
originals and variants.

    >>> text_problems("I love this mo\\u200bvie!")
    ['has an invisible character: U+200B ZERO WIDTH SPACE']
    >>> text_problems("I love this mоvie!")  # the "о" is Cyrillic
    ["has a word that mixes Latin and Cyrillic letters: 'mоvie' (о is U+043E CYRILLIC SMALL LETTER O)"]
    >>> text_problems("Zoë's naïve café in Αθήνα, Москва and 東京 👩\\u200d💻")
    []

Refused:

- control characters (Unicode category Cc) other than tab, line feed and carriage return;
- lone surrogates (category Cs): half a character, which no encoding can store;
- format characters (category Cf): zero-width spaces, joiners and non-joiners, soft hyphens,
  byte-order marks, bidirectional marks, embeddings, overrides and isolates, and the rest;
  except where writing needs them: a zero-width joiner inside an emoji sequence (👩‍💻),
  the tag characters of a subdivision flag (🏴 England), and a zero-width (non-)joiner
  between two letters of one script that shapes with them (Persian, Devanagari, ...: any
  script but Latin, Greek and Cyrillic);
- a word whose letters come from more than one script. A word is a run of letters and
  digits (``[^\\W_]+``). A character's scripts are its Unicode Script_Extensions; characters
  of the Common and Inherited scripts (digits, the micro sign, combining accents) go with
  any script, and Han goes with Hiragana and Katakana (Japanese) and with Hangul (Korean).
  A word passes when one script covers all its characters: UTS #39's "single script" test,
  word by word. So "naïve", "Zoë", "COVID-19", "Москва", "Αθήνα" and "食べる" pass, and
  "pаypal" with a Cyrillic "а" does not. A whole word in a look-alike script ("сор" for
  "cop") is a word of that script and passes: telling it from a real one is a matter of
  language, not of characters.

Texts are checked as given (callers normalize them to NFC first, as ``bibi.files`` and the
pair checks do).

Names (of teams, aliases and systems) follow one rule built on the same checks, written
below with ``name_normalize``, ``name_problems`` and ``name_key``. ``moment_text`` is how
every message writes a moment.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from datetime import UTC, datetime

import regex
from confusable_homoglyphs.confusables import confusables_data
from fontTools import unicodedata as unicode_scripts

ZWNJ, ZWJ = "\u200c", "\u200d"
_BLACK_FLAG = "\U0001f3f4"
_TAGS = range(0xE0020, 0xE0080)
# What may sit between an emoji and the zero-width joiner that follows it: presentation
# selectors and skin-tone modifiers.
_EMOJI_TRAILERS = frozenset("\ufe0e\ufe0f\U0001f3fb\U0001f3fc\U0001f3fd\U0001f3fe\U0001f3ff")
_NEVER_JOINED = frozenset({"Latn", "Grek", "Cyrl"})
_ANY_SCRIPT = frozenset({"Zyyy", "Zinh"})
# UTS #39's augmented script sets: Japanese writes Han with kana, Korean Han with Hangul.
_AUGMENTED = {
    "Hani": ("Hanb", "Jpan", "Kore"),
    "Hira": ("Jpan",),
    "Kana": ("Jpan",),
    "Hang": ("Kore",),
    "Bopo": ("Hanb",),
}
_SUSPECT = re.compile(r"[^\t\n\r\x20-\x7e]")
_WHITESPACE = re.compile(r"\s+")
_WORD = re.compile(r"[^\W_]+")
# A message names this many characters or words, then says how many more there are.
_NAMED = 3
# What draws nothing on a page, from Unicode's properties (``regex`` knows them; the standard
# library does not): Default_Ignorable_Code_Point (format characters, variation selectors, the
# Hangul fillers U+115F, U+1160, U+3164 and U+FFA0, which are letters by category), White_Space,
# and combining marks, which with no letter to sit on show nothing of their own; and U+2800
# BRAILLE PATTERN BLANK, a symbol whose glyph is empty, which no property names.
_BLANK = regex.compile(r"[\p{Default_Ignorable_Code_Point}\p{White_Space}\p{Mn}\p{Me}\u2800]")
# Of those, the ones that pass for a letter or a symbol (so no other check catches them): the
# Hangul fillers and the Braille blank. No name needs one; a name holding one shows a gap.
_FILLERS = regex.compile(r"[[\p{Default_Ignorable_Code_Point}&&\p{L}]\u2800]", regex.V1)


def moment_text(moment: datetime) -> str:
    """How the platform writes a deadline in its messages: server time, in UTC.

    >>> moment_text(datetime(2025, 3, 1, 12, 0, 30, 999, tzinfo=UTC))
    '2025-03-01 12:00:30 UTC'
    """
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def normalize_text(text: str) -> str:
    """NFC, every run of whitespace (tabs, line breaks too) as one space, no edge spaces."""
    return _WHITESPACE.sub(" ", unicodedata.normalize("NFC", text)).strip()


def normalized_offset(text: str, offset: int) -> int:
    """Where character ``offset`` of ``text`` lands in ``normalize_text(text)``: an offset
    a browser measured in what was typed, carried into the text that is stored.

        >>> normalized_offset("  two  words", 7)
        4
    """
    # A letter after the prefix keeps its trailing run of spaces as the one space it becomes.
    return len(normalize_text(text[:offset] + "x")) - 1


def character_name(char: str) -> str:
    """``U+200B ZERO WIDTH SPACE``: the code point and its Unicode name, for messages."""
    name = unicodedata.name(char, "")
    if not name:
        category = unicodedata.category(char)
        name = {"Cc": "(a control character)", "Cs": "(a lone surrogate)"}.get(
            category, "(unnamed)"
        )
    return f"U+{ord(char):04X} {name}"


def unstorable_characters(text: str) -> list[str]:
    """NUL and lone surrogates, named: what no database column or UTF-8 file can hold."""
    found = dict.fromkeys(char for char in text if char == "\x00" or "\ud800" <= char <= "\udfff")
    return [character_name(char) for char in found]


def shows_nothing(text: str) -> bool:
    """True when ``text`` holds characters but every one of them renders blank (spaces,
    format characters, Hangul fillers, the Braille blank, combining marks with no base).

    >>> shows_nothing("\u3164 \u200d\u2800"), shows_nothing("Team\u3164"), shows_nothing("")
    (True, False, False)
    """
    return bool(text) and all(_BLANK.match(char) for char in text)


def blank_problems(text: str) -> list[str]:
    """Why ``text``, a name or title someone else reads, would show less than it holds, as
    phrases to follow its name ("the name " + problem): it shows nothing at all, or it holds
    a blank character that passes for a letter (a Hangul filler, the Braille blank). Empty
    when it shows what it holds (an empty ``text`` is its caller's to refuse).

    >>> blank_problems("\u3164")
    ['shows nothing: it is made of characters that render blank (U+3164 HANGUL FILLER)']
    >>> blank_problems("Team \u2800")
    ['has a character that renders blank: U+2800 BRAILLE PATTERN BLANK']
    """
    if shows_nothing(text):
        named = _listed([character_name(char) for char in dict.fromkeys(text)])
        return [f"shows nothing: it is made of characters that render blank ({named})"]
    fillers = [character_name(char) for char in dict.fromkeys(_FILLERS.findall(text))]
    if not fillers:
        return []
    what = "a character that renders blank" if len(fillers) == 1 else "characters that render blank"
    return [f"has {what}: {_listed(fillers)}"]


def invisible_characters(text: str) -> list[str]:
    """The control, format and surrogate characters of ``text`` that it may not hold, named,
    each once, in order of appearance (see the module docstring for the ones allowed)."""
    found: dict[str, None] = {}
    for match in _SUSPECT.finditer(text):
        char = match.group()
        category = unicodedata.category(char)
        if category in ("Cc", "Cs") or (
            category == "Cf" and not _format_character_needed(text, match.start())
        ):
            found[char] = None
    return [character_name(char) for char in found]


def _format_character_needed(text: str, index: int) -> bool:
    char = text[index]
    if ord(char) in _TAGS:
        start = index
        while start > 0 and ord(text[start - 1]) in _TAGS:
            start -= 1
        return start > 0 and text[start - 1] == _BLACK_FLAG
    if char not in (ZWJ, ZWNJ) or index == 0 or index == len(text) - 1:
        return False
    before, after = text[index - 1], text[index + 1]
    if char == ZWJ:
        emoji_before = index - 1
        while emoji_before > 0 and text[emoji_before] in _EMOJI_TRAILERS:
            emoji_before -= 1
        if _is_emoji(text[emoji_before]) and _is_emoji(after):
            return True
    shared = _letter_scripts(before) & _letter_scripts(after)
    return bool(shared - _ANY_SCRIPT - _NEVER_JOINED)


def _is_emoji(char: str) -> bool:
    return unicodedata.category(char) == "So"


def _letter_scripts(char: str) -> frozenset[str]:
    if unicodedata.category(char)[0] not in "LM":
        return frozenset()
    return _scripts(char)


@functools.lru_cache(maxsize=8192)
def _scripts(char: str) -> frozenset[str]:
    """The scripts ``char`` is written in, augmented as UTS #39 says (Han in Japanese, ...)."""
    scripts = set(unicode_scripts.script_extension(char))
    for script in list(scripts):
        scripts.update(_AUGMENTED.get(script, ()))
    return frozenset(scripts)


def mixed_script_words(text: str) -> list[str]:
    """Problems with the words of ``text`` that no one script covers, one per mix of scripts:
    ``has a word that mixes Latin and Cyrillic letters: 'mоvie' (о is U+043E ...)``."""
    by_scripts: dict[tuple[str, ...], list[str]] = {}
    for word in dict.fromkeys(_WORD.findall(text)):
        if word.isascii():
            continue
        described = _mixed(word)
        if described is not None:
            scripts, description = described
            by_scripts.setdefault(scripts, []).append(description)
    return [
        f"has {'a word that mixes' if len(words) == 1 else 'words that mix'} "
        f"{_and(list(scripts))} letters: {_listed(words)}"
        for scripts, words in by_scripts.items()
    ]


def _mixed(word: str) -> tuple[tuple[str, ...], str] | None:
    common: set[str] | None = None
    counts: dict[str, int] = {}
    for char in word:
        scripts = _scripts(char)
        if scripts & _ANY_SCRIPT:
            continue
        common = set(scripts) if common is None else common & scripts
        primary = unicode_scripts.script(char)
        counts[primary] = counts.get(primary, 0) + 1
    if common is None or common:
        return None
    # The word's own script is the one most of its letters are in; the others are the swaps.
    main = max(counts, key=lambda script: counts[script])
    odd = dict.fromkeys(
        char for char in word if not (_scripts(char) & _ANY_SCRIPT) and main not in _scripts(char)
    )
    names = [
        unicode_scripts.script_name(script)
        for script in sorted(counts, key=lambda script: (script != main, script))
    ]
    swaps = [f"{char} is {character_name(char)}" for char in odd]
    return tuple(names), f"'{word[:60]}' ({_listed(swaps)})"


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _listed(items: list[str]) -> str:
    shown = ", ".join(items[:_NAMED])
    return f"{shown} and {len(items) - _NAMED} more" if len(items) > _NAMED else shown


def text_problems(text: str, *, words: bool = True) -> list[str]:
    """Why ``text`` may not be stored as a pair or example text, as phrases to follow its
    name ("the variant " + problem); empty when it may.

    ``words=False`` checks the characters only: for free text that no system reads (a
    rationale), which may quote a look-alike letter to explain an edit.
    """
    if text.isascii() and not _SUSPECT.search(text):
        return []
    problems: list[str] = []
    invisible = invisible_characters(text)
    if invisible:
        what = "an invisible character" if len(invisible) == 1 else "invisible characters"
        problems.append(f"has {what}: {_listed(invisible)}")
    if words:
        problems += mixed_script_words(text)
    return problems


# --- Names: teams, systems, aliases ---------------------------------------------------------
#
# A name is shown on leaderboards beside other names, so it must not pass for another. One
# rule for team names, team aliases and system names:
#
# - it is stored NFKC-normalised, runs of whitespace as one space, trimmed
#   (``name_normalize``): fullwidth "Ｔｅａｍ" is stored as "Team", a no-break space as a space;
# - it shows something, and nothing blank that passes for a letter (``blank_problems``): a
#   name of Hangul fillers (U+3164), Braille blanks (U+2800), spaces and joiners, which a page
#   shows as nothing, is refused, and so is "Team" with a filler after it;
# - it holds no invisible or direction-changing character and no word mixing scripts
#   (``text_problems``, the rule for pair texts): "Strаwman" with a Cyrillic "а" is refused,
#   an all-Cyrillic "Москва" is not;
# - it is unique on its confusable-folded form (``name_key``): case folded, accents and
#   invisible characters dropped, and each character replaced by the prototype Unicode's
#   confusables.txt (UTS #39) gives it, as shipped by the ``confusable_homoglyphs`` package
#   (case is folded first, so "BUILDER" stays "builder": UTS #39 alone would read its "I" as
#   an "l"). So "Team-A" and "team‐a" (U+2010), "Strawman" and "Strawrnan", "Team1" and
#   "Teaml" are the same name.


def name_normalize(name: str) -> str:
    """NFKC, every run of whitespace as one space, no edge spaces: how a name is stored.

    >>> name_normalize(" \\uff34eam\\u00a0A ")
    'Team A'
    """
    return _WHITESPACE.sub(" ", unicodedata.normalize("NFKC", name)).strip()


def name_problems(name: str) -> str | None:
    """Why the (normalized) ``name`` may not be a team's, an alias or a system's name, as a
    sentence; None when it may.

    >>> name_problems("Team\\u202eA")
    'The name has an invisible character: U+202E RIGHT-TO-LEFT OVERRIDE.'
    >>> name_problems("Москва")
    >>> name_problems("\u3164 \u200d")
    'The name shows nothing: it is made of characters that render blank (U+3164 HANGUL FILLER, U+0020 SPACE, U+200D ZERO WIDTH JOINER).'
    """
    problems = blank_problems(name)
    if not shows_nothing(name):
        problems += text_problems(name)
    return _problems_sentence("The name", problems)


def blank_name_problem(name: str, *, what: str = "The name") -> str | None:
    """Why ``name``, a shared task's title or a person's user name, would show less than it
    holds (``blank_problems``), as a sentence; None when it shows what it holds. The part of
    the name rule those names follow too (they are not compared for look-alikes).

    >>> blank_name_problem("\u2800", what="The user name")
    'The user name shows nothing: it is made of characters that render blank (U+2800 BRAILLE PATTERN BLANK).'
    """
    return _problems_sentence(what, blank_problems(name))


def _problems_sentence(what: str, problems: list[str]) -> str | None:
    """``what`` ("The name") followed by its ``problems`` as one sentence; None for none."""
    return f"{what} {'; it '.join(problems)}." if problems else None


def name_lookalike(name: str, taken: Iterable[str]) -> str | None:
    """The first of ``taken`` that looks like ``name`` (the same ``name_key``), or None."""
    key = name_key(name)
    return next((other for other in taken if name_key(other) == key), None)


def name_clash_text(name: str, other: str, *, same: str, whose: str) -> str:
    """Why ``name`` is refused next to ``other``, a name it looks like: ``same`` when they
    differ in case only, else which characters make them look alike, ``whose`` saying what
    ``other`` is ("the name of another system of the team")."""
    if name.casefold() == other.casefold():
        return same
    seen = set(other) | set(other.casefold()) | set(other.upper())
    odd = _listed([character_name(char) for char in dict.fromkeys(name) if char not in seen])
    return (
        f"'{name}' looks like '{other}', {whose} (differing in {odd or 'look-alike letters'}): "
        "names are compared ignoring case, accents and look-alike characters. Choose "
        "another name."
    )


@functools.cache
def _prototypes() -> dict[str, str]:
    """Character → the prototype it is confusable with (confusables.txt, UTS #39).

    ``confusables_data`` lists, for a confusable character, its one prototype, and for a
    prototype, every character confusable with it. A pair that only lists each other goes to
    the smaller of the two, so both sides fold alike. Right-to-left entries come wrapped in
    U+200E marks, which are dropped.
    """
    mapping: dict[str, str] = {}
    for char, entries in confusables_data.items():
        char = char.replace("\u200e", "")
        if len(char) != 1 or len(entries) != 1:
            continue
        target = entries[0]["c"].replace("\u200e", "")
        back = confusables_data.get(entries[0]["c"], [])
        if len(back) == 1 and back[0]["c"].replace("\u200e", "") == char:
            target = min(char, target)
        if target != char:
            mapping[char] = target
    return mapping


def _fold_once(text: str) -> str:
    decomposed = unicodedata.normalize("NFD", unicodedata.normalize("NFKC", text).casefold())
    prototypes = _prototypes()
    mapped = "".join(
        prototypes.get(char, char)
        for char in decomposed
        if not unicodedata.combining(char) and unicodedata.category(char) != "Cf"
    )
    return mapped.casefold()


def name_key(name: str) -> str:
    """The form names are compared on: two names with one key look alike.

    >>> name_key("Strawman") == name_key("ＳＴＲＡＷＭÁＮ") == name_key("Strawrnan")
    True
    """
    return _WHITESPACE.sub(" ", _fold_once(_fold_once(name))).strip()
