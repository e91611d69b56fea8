"""Search words and snippets for the PostgreSQL store, by the rules every store shares.

Words are runs of letters and digits (underscore and everything else separate them),
lowercased and stripped of accents, as SQLite's FTS5 `unicode61 remove_diacritics 2`
tokenizer and the in-memory store do. PostgreSQL's own text-search parser splits words
differently (hyphenated compounds, e-mail addresses, locale-dependent letters), so the
store extracts the words here and keeps them in an indexed `text[]` column: a query
matches a message when its word array contains every query word, which user text can
never turn into syntax.
"""

from __future__ import annotations

import re
import unicodedata

SNIPPET_CHARS = 160
SEARCHED_ROLES = frozenset({"user", "assistant"})
# A GIN index entry must fit in a fraction of a page; no real word is this long, and a
# longer one is matched by its first WORD_CHARS characters.
WORD_CHARS = 200

_WORD = re.compile(r"[^\W_]+")


def fold(text: str) -> str:
    """Lowercase and strip accents."""
    decomposed = unicodedata.normalize("NFD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def query_words(text: str) -> list[str]:
    """The distinct words of `text`, in order of first appearance."""
    return list(dict.fromkeys(w[:WORD_CHARS] for w in _WORD.findall(fold(text))))


def message_words(role: str, content: str) -> list[str] | None:
    """What `messages.words` holds: None for messages search does not cover."""
    if role not in SEARCHED_ROLES or not content:
        return None
    return sorted(set(query_words(content)))


def snippet(content: str, wanted: list[str]) -> str:
    """One line of at most SNIPPET_CHARS around the first matching word."""
    text = " ".join(content.split())
    if len(text) <= SNIPPET_CHARS:
        return text
    want = set(wanted)
    at = next((m.start() for m in _WORD.finditer(text) if fold(m.group())[:WORD_CHARS] in want), 0)
    room = SNIPPET_CHARS - 2  # one ellipsis each side
    start = max(0, min(at - room // 3, len(text) - room))
    end = start + room
    return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")
