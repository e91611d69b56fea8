"""The search rules every session store shares: what a word is, and what a hit shows.

Words are runs of letters and digits (underscore and everything else separate them),
lowercased and stripped of accents, and matched by their stem ("bananas" and "banana"
are one term, as are "running" and "run"): the rules of SQLite's FTS5 `porter unicode61
remove_diacritics 2` tokenizer, which the in-memory and PostgreSQL stores reproduce with
these functions (`stem` is FTS5's Porter stemmer, step for step, on the word's UTF-8
bytes) so the conformance suite can hold every backend to one behaviour.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Collection

SNIPPET_CHARS = 160
# Tool output and system prompts are bulky and would drown the conversation a person is
# looking for: search covers what the person and the agent said.
SEARCHED_ROLES = frozenset({"user", "assistant"})

WORD = re.compile(r"[^\W_]+")


def fold(text: str) -> str:
    """Lowercase and strip accents."""
    decomposed = unicodedata.normalize("NFD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def words(text: str) -> list[str]:
    """The folded words of `text`, in order, repeats kept."""
    return WORD.findall(fold(text))


def terms(text: str) -> list[str]:
    """The stems of `text`'s words, in order, repeats kept: what search matches on."""
    return [stem(word) for word in words(text)]


def snippet(content: str, wanted: Collection[str], *, word_chars: int | None = None) -> str:
    """One line of at most SNIPPET_CHARS around the first word whose term is in `wanted`
    (terms are compared on their first `word_chars` characters when given)."""
    text = " ".join(content.split())
    if len(text) <= SNIPPET_CHARS:
        return text
    at = next(
        (m.start() for m in WORD.finditer(text) if stem(fold(m.group()))[:word_chars] in wanted),
        0,
    )
    room = SNIPPET_CHARS - 2  # one ellipsis each side
    start = max(0, min(at - room // 3, len(text) - room))
    end = start + room
    return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")


# -- the Porter stemmer of SQLite's FTS5 `porter` tokenizer --------------------------------
#
# Reproduced rule for rule, including its quirks (a suffix must be shorter than the word;
# only the first suffix of a step that matches is tried; "sses" alone becomes "sse"), and
# on UTF-8 bytes as FTS5 sees them: every byte that is not an ASCII vowel is a consonant.

# FTS5 leaves tokens outside these lengths (in bytes) as they are.
_STEM_MIN = 3
_STEM_MAX = 64
_VOWELS = frozenset(b"aeiou")
_Y = ord("y")


def _is_vowel(c: int, y_is_vowel: bool) -> bool:
    return c in _VOWELS or (y_is_vowel and c == _Y)


def _gobble_vc(z: bytes, prev_consonant: bool) -> int:
    """Past the first vowel-then-consonant run of `z`: the index after it, or 0."""
    consonant = prev_consonant
    i = 0
    n = len(z)
    while i < n:
        consonant = not _is_vowel(z[i], consonant)
        if not consonant:
            break
        i += 1
    i += 1
    while i < n:
        consonant = not _is_vowel(z[i], consonant)
        if consonant:
            return i + 1
        i += 1
    return 0


def _m_gt0(z: bytes) -> bool:
    return _gobble_vc(z, False) != 0


def _m_gt1(z: bytes) -> bool:
    n = _gobble_vc(z, False)
    return bool(n) and _gobble_vc(z[n:], True) != 0


def _m_eq1(z: bytes) -> bool:
    n = _gobble_vc(z, False)
    return bool(n) and _gobble_vc(z[n:], True) == 0


def _o_star(z: bytes) -> bool:
    """Ends consonant-vowel-consonant, the last not w, x or y."""
    if not z or z[-1] in b"wxy":
        return False
    mask = 0
    consonant = False
    for c in z:
        consonant = not _is_vowel(c, consonant)
        mask = (mask << 1) + consonant
    return (mask & 0b111) == 0b101


def _m_gt1_s_or_t(z: bytes) -> bool:
    return bool(z) and z[-1] in b"st" and _m_gt1(z)


def _has_vowel(z: bytes) -> bool:
    return any(_is_vowel(c, i > 0) for i, c in enumerate(z))


_Rule = tuple[bytes, Callable[[bytes], bool] | None, bytes]
_STEP2: tuple[_Rule, ...] = (
    (b"ational", _m_gt0, b"ate"),
    (b"tional", _m_gt0, b"tion"),
    (b"enci", _m_gt0, b"ence"),
    (b"anci", _m_gt0, b"ance"),
    (b"izer", _m_gt0, b"ize"),
    (b"logi", _m_gt0, b"log"),
    (b"bli", _m_gt0, b"ble"),
    (b"alli", _m_gt0, b"al"),
    (b"entli", _m_gt0, b"ent"),
    (b"eli", _m_gt0, b"e"),
    (b"ousli", _m_gt0, b"ous"),
    (b"ization", _m_gt0, b"ize"),
    (b"ation", _m_gt0, b"ate"),
    (b"ator", _m_gt0, b"ate"),
    (b"alism", _m_gt0, b"al"),
    (b"iveness", _m_gt0, b"ive"),
    (b"fulness", _m_gt0, b"ful"),
    (b"ousness", _m_gt0, b"ous"),
    (b"aliti", _m_gt0, b"al"),
    (b"iviti", _m_gt0, b"ive"),
    (b"biliti", _m_gt0, b"ble"),
)
_STEP3: tuple[_Rule, ...] = (
    (b"ical", _m_gt0, b"ic"),
    (b"ness", _m_gt0, b""),
    (b"icate", _m_gt0, b"ic"),
    (b"iciti", _m_gt0, b"ic"),
    (b"ful", _m_gt0, b""),
    (b"ative", _m_gt0, b""),
    (b"alize", _m_gt0, b"al"),
)
_STEP4: tuple[_Rule, ...] = (
    (b"al", _m_gt1, b""),
    (b"ance", _m_gt1, b""),
    (b"ence", _m_gt1, b""),
    (b"er", _m_gt1, b""),
    (b"ic", _m_gt1, b""),
    (b"able", _m_gt1, b""),
    (b"ible", _m_gt1, b""),
    (b"ant", _m_gt1, b""),
    (b"ement", _m_gt1, b""),
    (b"ment", _m_gt1, b""),
    (b"ent", _m_gt1, b""),
    (b"ion", _m_gt1_s_or_t, b""),
    (b"ou", _m_gt1, b""),
    (b"ism", _m_gt1, b""),
    (b"ate", _m_gt1, b""),
    (b"iti", _m_gt1, b""),
    (b"ous", _m_gt1, b""),
    (b"ive", _m_gt1, b""),
    (b"ize", _m_gt1, b""),
)
_STEP1B: tuple[_Rule, ...] = (
    (b"eed", _m_gt0, b"ee"),
    (b"ed", _has_vowel, b""),
    (b"ing", _has_vowel, b""),
)
_STEP1B2: tuple[_Rule, ...] = ((b"at", None, b"ate"), (b"bl", None, b"ble"), (b"iz", None, b"ize"))


def _apply(word: bytes, rules: tuple[_Rule, ...]) -> tuple[bytes, bool]:
    """The first rule whose suffix ends `word` (and is shorter than it) decides; returns
    the word and whether the rule fired."""
    for suffix, condition, replacement in rules:
        if len(word) > len(suffix) and word.endswith(suffix):
            base = word[: len(word) - len(suffix)]
            if condition is None or condition(base):
                return base + replacement, True
            return word, False
    return word, False


def stem(word: str) -> str:
    """The Porter stem of a folded word, exactly as FTS5's `porter` tokenizer makes it."""
    raw = word.encode()
    if not _STEM_MIN <= len(raw) <= _STEM_MAX:
        return word
    z = raw
    # Step 1a.
    if z[-1:] == b"s":
        if z[-2:-1] == b"e":
            if (len(z) > 4 and z[-4:-2] == b"ss") or (len(z) > 3 and z[-3:-2] == b"i"):
                z = z[:-2]
            else:
                z = z[:-1]
        elif z[-2:-1] != b"s":
            z = z[:-1]
    # Step 1b: "eed" -> "ee"; "ed" and "ing" go, and then the stem may be mended.
    before = z
    z, fired = _apply(z, _STEP1B)
    if fired and not before.endswith(b"eed"):
        z, mended = _apply(z, _STEP1B2)
        if not mended:
            c = z[-1]
            if len(z) > 1 and not _is_vowel(c, False) and c not in b"lsz" and c == z[-2]:
                z = z[:-1]
            elif _m_eq1(z) and _o_star(z):
                z += b"e"
    # Step 1c.
    if z[-1:] == b"y" and _has_vowel(z[:-1]):
        z = z[:-1] + b"i"
    # Steps 2 to 4.
    z = _apply(z, _STEP2)[0]
    z = _apply(z, _STEP3)[0]
    z = _apply(z, _STEP4)[0]
    # Step 5a.
    if z[-1:] == b"e":
        base = z[:-1]
        if _m_gt1(base) or (_m_eq1(base) and not _o_star(base)):
            z = base
    # Step 5b.
    if len(z) > 1 and z.endswith(b"ll") and _m_gt1(z[:-1]):
        z = z[:-1]
    return z.decode(errors="replace")
