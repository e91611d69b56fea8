"""Search words and snippets for the PostgreSQL store, by the rules every store shares.

Words are runs of letters and digits (underscore and everything else separate them),
lowercased, stripped of accents and stemmed, as SQLite's FTS5 `porter unicode61
remove_diacritics 2` tokenizer and the in-memory store do. PostgreSQL's own text-search
parser (and its `english` stemmer, which also drops stop words) splits words
differently (hyphenated compounds, e-mail addresses, locale-dependent letters), so the
store extracts the words here and keeps them in an indexed `text[]` column: a query
matches a message when its word array contains every query word, which user text can
never turn into syntax.
"""

from __future__ import annotations

from collections.abc import Collection

from seam.contracts import search
from seam.contracts.search import SEARCHED_ROLES

# A GIN index entry must fit in a fraction of a page; no real word is this long, and a
# longer one is matched by its first WORD_CHARS characters.
WORD_CHARS = 200


def query_words(text: str) -> list[str]:
    """The distinct terms (word stems) of `text`, in order of first appearance."""
    return list(dict.fromkeys(t[:WORD_CHARS] for t in search.terms(text)))


def message_words(role: str, content: str) -> list[str] | None:
    """What `messages.words` holds: None for messages search does not cover."""
    if role not in SEARCHED_ROLES or not content:
        return None
    return sorted(set(query_words(content)))


def snippet(content: str, wanted: Collection[str]) -> str:
    """One line around the first matching word (compared on its first WORD_CHARS)."""
    return search.snippet(content, set(wanted), word_chars=WORD_CHARS)
