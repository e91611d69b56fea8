"""Full-text ranking of memory entries: Okapi BM25 over the session search's word rules.

Memory is a few dozen entries (a few thousand where a person raised the limits), read
from two small files: ranking them in Python on each search is cheaper than keeping an
FTS index in step with hand edits. Unlike session search, a query's words are not all
required (a question rarely repeats every word of the note that answers it), but an entry
must share at least half of the query's content words: one word in common ("office",
"kids") is a coincidence in a memory of personal facts, and the meaning side finds the
entry when it is one. Function words ("the", "my", "where") are not content words.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

from seam.contracts.search import terms, words

# Robertson and Zaragoza's usual constants: term frequency saturates after a few repeats;
# long entries are discounted by three quarters of their excess length.
K1 = 1.2
B = 0.75
_CACHED_ENTRIES = 1 << 14
# Of a query's content terms, the share an entry must hold to match by words.
MIN_SHARED = 0.5
# English function words: they say how a question is asked, not what it is about.
_FUNCTION_WORDS = """a about all am an and any are as at be been but by can could did do does
for from had has have he her him his how i if in into is it its me mine my no not of on or
our ours s she should so than that the their them then there these they this those to up
us was we were what when where which who whom why will with would you your yours"""
STOP_WORDS = frozenset(_FUNCTION_WORDS.split())
_STOP_TERMS = frozenset(terms(" ".join(STOP_WORDS)))


def content_words(text: str) -> str:
    """`text`'s words as search sees them (folded: lowercase, no accents) less its
    function words, for the embedder: a vector that averages word vectors is otherwise
    pulled towards "what is my", and a capital at the start of a sentence is noise."""
    return " ".join(word for word in words(text) if word not in STOP_WORDS) or text


@lru_cache(maxsize=_CACHED_ENTRIES)
def entry_terms(text: str) -> Counter[str]:
    """The terms of one entry with their counts (cached: entries rarely change)."""
    return Counter(terms(text))


def bm25_rank(query: str, entries: Sequence[str]) -> list[int]:
    """Indexes of `entries` holding at least MIN_SHARED of `query`'s content terms, best
    first (ties keep the entries' order)."""
    wanted = set(terms(query)) - _STOP_TERMS
    if not wanted or not entries:
        return []
    needed = math.ceil(MIN_SHARED * len(wanted))
    counted = [entry_terms(text) for text in entries]
    lengths = [sum(counts.values()) for counts in counted]
    average = sum(lengths) / len(lengths) or 1.0
    total = len(entries)
    weights = {term: _idf(total, sum(1 for c in counted if term in c)) for term in wanted}
    scores: list[tuple[float, int]] = []
    for index, counts in enumerate(counted):
        shared = wanted & counts.keys()
        if len(shared) < needed:
            continue
        score = 0.0
        norm = K1 * (1 - B + B * lengths[index] / average)
        for term in shared:
            tf = counts[term]
            score += weights[term] * tf * (K1 + 1) / (tf + norm)
        scores.append((-score, index))
    scores.sort()
    return [index for _, index in scores]


def _idf(total: int, having: int) -> float:
    """Lucene's BM25 idf: positive however common the term, so a match always counts."""
    return math.log(1 + (total - having + 0.5) / (having + 0.5))


__all__ = ["MIN_SHARED", "STOP_WORDS", "bm25_rank", "content_words", "entry_terms"]
