"""Copies of live sessions' transcripts, kept in memory by a store between turns.

A turn loads its session's whole transcript. Read from the database every turn, that is
O(messages) rows decoded, for a transcript this process read (or wrote) a moment before.
So a store keeps the last transcript it loaded of each recently used session, stamped
with the session row as it was then, and checks the stamp on the next load.

The stamp is (`message_count`, `cuts`, `created_at`): messages are only ever appended or
cut from the end, never edited; `cuts` is bumped by a trigger for every message deleted,
whichever process or path deletes it (an undo, a rewind, an edit from the web page);
`created_at` tells a session deleted and made again under the same key. A copy whose
cuts and creation still match is the start of the transcript: what was appended since
is the messages from its count on (`sqlite_transcripts`, `postgres_transcripts`).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from seam.contracts.messages import Message

# Sessions whose transcripts are kept, and their messages in all (least recently loaded
# dropped first): a worker serves many sessions, and any copy can be read again.
KEPT_SESSIONS = 128
KEPT_MESSAGES = 100_000

# (message_count, cuts, created_at): a transcript as a session's row stamps it.
Stamp = tuple[int, int, float]


def extends(kept: Stamp, now: Stamp) -> bool:
    """Whether a copy stamped `kept` is the start of a transcript stamped `now`: nothing
    was cut since and the session is the same one (and so it holds `kept`'s count)."""
    return now[1:] == kept[1:] and now[0] >= kept[0]


@dataclass(frozen=True, slots=True)
class KeptTranscript:
    stamp: Stamp
    messages: tuple[Message, ...]


class TranscriptCopies:
    """The kept transcripts, newest last."""

    def __init__(self, size: int = KEPT_SESSIONS, messages: int = KEPT_MESSAGES) -> None:
        self._size = size
        self._most = messages
        self._kept: OrderedDict[str, KeptTranscript] = OrderedDict()
        self._messages = 0  # in all the copies

    def get(self, key: str) -> KeptTranscript | None:
        """The copy of `key`'s transcript, now the most recently used; None if none."""
        kept = self._kept.get(key)
        if kept is not None:
            self._kept.move_to_end(key)
        return kept

    def keep(self, key: str, stamp: Stamp, messages: tuple[Message, ...]) -> bool:
        """Keep `messages` as `key`'s copy, stamped `stamp`, unless they are not as many
        as the stamp counts (a row written outside Seam): then no copy is kept. Whether
        it was kept."""
        self.drop(key)
        if len(messages) != stamp[0]:
            return False
        kept = self._kept
        kept[key] = KeptTranscript(stamp, messages)
        self._messages += len(messages)
        while len(kept) > self._size or (self._messages > self._most and len(kept) > 1):
            _, oldest = kept.popitem(last=False)
            self._messages -= len(oldest.messages)
        return True

    def appended(self, key: str, stamp: Stamp | None, messages: Sequence[Message]) -> None:
        """This store committed `messages` to `key`'s transcript, leaving the row at
        `stamp`: extend the copy when it was the file's just before, else drop it."""
        kept = self._kept.get(key)
        if kept is None or not messages:
            return
        count, cuts, created = kept.stamp
        if stamp != (count + len(messages), cuts, created) or any(m.images for m in messages):
            # Moved under it (or images, which a read hydrates from their own table).
            self.drop(key)
            return
        self._kept[key] = KeptTranscript(stamp, (*kept.messages, *messages))
        self._messages += len(messages)

    def drop(self, key: str) -> None:
        gone = self._kept.pop(key, None)
        if gone is not None:
            self._messages -= len(gone.messages)
