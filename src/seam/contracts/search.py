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
from functools import lru_cache

SNIPPET_CHARS = 160
# Tool output and system prompts are bulky and would drown the conversation a person is
# looking for: search covers what the person and the agent said.
SEARCHED_ROLES = frozenset({"user", "assistant"})

WORD = re.compile(r"[^\W_]+")


def fold(text: str) -> str:
    """Lowercase and strip accents."""
    if text.isascii():  # no accents to strip (most text: checked at C speed)
        return text.lower()
    decomposed = unicodedata.normalize("NFD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def words(text: str) -> list[str]:
    """The folded words of `text`, in order, repeats kept."""
    return WORD.findall(fold(text))


def terms(text: str) -> list[str]:
    """The stems of `text`'s words, in order, repeats kept: what search matches on."""
    return [_cached_stem(word) for word in words(text)]


# A snippet stems every word before the first match, and a search builds up to `limit`
# snippets: the same few thousand words again and again. Stemming one costs several
# microseconds of pure Python, a cache hit a dictionary lookup; the bound keeps a store
# that sees every identifier under the sun from growing without end.
_STEM_CACHE = 1 << 16


@lru_cache(maxsize=_STEM_CACHE)
def _cached_stem(word: str) -> str:
    return stem(word)


@lru_cache(maxsize=_STEM_CACHE)
def _term(raw: str) -> str:
    """The term of one word as it appears in a message (folded, then stemmed)."""
    return _cached_stem(fold(raw))


def snippet(content: str, wanted: Collection[str], *, word_chars: int | None = None) -> str:
    """One line of at most SNIPPET_CHARS around the first word whose term is in `wanted`
    (terms are compared on their first `word_chars` characters when given)."""
    text = " ".join(content.split())
    if len(text) <= SNIPPET_CHARS:
        return text
    at = _first_match(text, wanted, word_chars)
    room = SNIPPET_CHARS - 2  # one ellipsis each side
    start = max(0, min(at - room // 3, len(text) - room))
    end = start + room
    return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")


def _first_match(text: str, wanted: Collection[str], word_chars: int | None) -> int:
    """Where the first word whose term is in `wanted` starts (0 if none does): the
    snippet's hot loop, one cached term lookup a word until the first hit."""
    term = _term
    if word_chars is None:
        for match in WORD.finditer(text):
            if term(match.group()) in wanted:
                return match.start()
        return 0
    for match in WORD.finditer(text):
        if term(match.group())[:word_chars] in wanted:
            return match.start()
    return 0


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


def _rules(condition: Callable[[bytes], bool] | None, table: str) -> tuple[_Rule, ...]:
    """Porter's rules written as he lists them, `suffix:replacement` in order, one
    condition on the stem for the whole step."""
    pairs = (item.partition(":") for item in table.split())
    return tuple((suffix.encode(), condition, new.encode()) for suffix, _, new in pairs)


_STEP2 = _rules(
    _m_gt0,
    "ational:ate tional:tion enci:ence anci:ance izer:ize logi:log bli:ble alli:al entli:ent "
    "eli:e ousli:ous ization:ize ation:ate ator:ate alism:al iveness:ive fulness:ful "
    "ousness:ous aliti:al iviti:ive biliti:ble",
)
_STEP3 = _rules(_m_gt0, "ical:ic ness: icate:ic iciti:ic ful: ative: alize:al")
# "ion" goes only after an s or a t.
_STEP4 = tuple(
    (suffix, _m_gt1_s_or_t if suffix == b"ion" else _m_gt1, replacement)
    for suffix, _, replacement in _rules(
        None,
        "al: ance: ence: er: ic: able: ible: ant: ement: ment: ent: ion: ou: ism: ate: "
        "iti: ous: ive: ize:",
    )
)
_STEP1B = (*_rules(_m_gt0, "eed:ee"), *_rules(_has_vowel, "ed: ing:"))
_STEP1B2 = _rules(None, "at:ate bl:ble iz:ize")


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
    z = _step1b(_step1a(raw))
    # Step 1c.
    if z[-1:] == b"y" and _has_vowel(z[:-1]):
        z = z[:-1] + b"i"
    # Steps 2 to 4.
    z = _apply(z, _STEP2)[0]
    z = _apply(z, _STEP3)[0]
    z = _apply(z, _STEP4)[0]
    return _step5(z).decode(errors="replace")


def _step1a(z: bytes) -> bytes:
    """Plurals: "sses" -> "ss", "ies" -> "i", a last "s" goes (not from "ss")."""
    if z[-1:] != b"s":
        return z
    if z[-2:-1] == b"e":
        if (len(z) > 4 and z[-4:-2] == b"ss") or (len(z) > 3 and z[-3:-2] == b"i"):
            return z[:-2]
        return z[:-1]
    return z[:-1] if z[-2:-1] != b"s" else z


def _step1b(z: bytes) -> bytes:
    """ "eed" -> "ee"; "ed" and "ing" go, and then the stem may be mended."""
    before = z
    z, fired = _apply(z, _STEP1B)
    if not fired or before.endswith(b"eed"):
        return z
    z, mended = _apply(z, _STEP1B2)
    if mended:
        return z
    c = z[-1]
    if len(z) > 1 and not _is_vowel(c, False) and c not in b"lsz" and c == z[-2]:
        return z[:-1]
    if _m_eq1(z) and _o_star(z):
        return z + b"e"
    return z


def _step5(z: bytes) -> bytes:
    """A last "e" goes from a long enough stem; "ll" becomes "l" in one."""
    if z[-1:] == b"e":
        base = z[:-1]
        if _m_gt1(base) or (_m_eq1(base) and not _o_star(base)):
            z = base
    if len(z) > 1 and z.endswith(b"ll") and _m_gt1(z[:-1]):
        z = z[:-1]
    return z
