"""The search rules every session store shares: what a word is, and what a hit shows.

Words are runs of letters and digits (underscore and everything else separate them),
lowercased and stripped of accents: the rules of SQLite's FTS5 `unicode61
remove_diacritics 2` tokenizer, which the in-memory and PostgreSQL stores reproduce with
these functions so the conformance suite can hold every backend to one behaviour.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection

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


def snippet(content: str, wanted: Collection[str], *, word_chars: int | None = None) -> str:
    """One line of at most SNIPPET_CHARS around the first word in `wanted` (words are
    compared on their first `word_chars` characters when given)."""
    text = " ".join(content.split())
    if len(text) <= SNIPPET_CHARS:
        return text
    at = next((m.start() for m in WORD.finditer(text) if fold(m.group())[:word_chars] in wanted), 0)
    room = SNIPPET_CHARS - 2  # one ellipsis each side
    start = max(0, min(at - room // 3, len(text) - room))
    end = start + room
    return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")
