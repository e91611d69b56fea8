"""What a claim read about its session, kept for the turn's next two questions.

A turn starts by asking its store for the session's last event seq (`last_seq`) and its
transcript (`load`). The claim that made this process the session's runner has just
read both, in the same transaction: kept as hints, they answer those two questions with
no statement of their own. Each store says how long its hints may serve; both drop them
after SEQ_HINT_SECONDS whatever happens, so a question asked much later reads the store.

Why a hint is the answer: the only writer of a session's events is the holder of its
running submission, which the claim just made this process; and the session's row is as
the claim read it after taking the session, a moment earlier, so the load sees the
session as a load sent with the claim would have.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from seam.contracts.sessions import SessionInfo
from seam.services.sessions.transcript_copies import Stamp

SEQ_HINT_SECONDS = 0.05


def _fresh(taken: float) -> bool:
    """Whether a hint taken at `taken` (`time.monotonic`) may still serve."""
    return time.monotonic() - taken < SEQ_HINT_SECONDS


@dataclass(frozen=True, slots=True)
class SeqHint:
    """The last event seq of the session a claim just took, for the turn's `last_seq`."""

    session_key: str
    seq: int
    taken: float = field(default_factory=time.monotonic)

    def serves(self, session_key: str) -> bool:
        return session_key == self.session_key and _fresh(self.taken)


@dataclass(frozen=True, slots=True)
class LoadHint:
    """The row and transcript stamp of the session a claim just took, for the turn's
    `load`: when the store's kept copy of the transcript has that stamp, the load is
    answered from the copy (`transcript_copies`)."""

    session: SessionInfo
    stamp: Stamp
    taken: float = field(default_factory=time.monotonic)

    def serves(self, session_key: str) -> bool:
        return session_key == self.session.key and _fresh(self.taken)


class HintsUntilWrite:
    """A claim's hints that serve until this process runs its next write to the store
    (SQLite: one file; `writes` counts the writes run, and the claim notes the count in
    its own transaction, so even a write that ran in the same transaction after it
    counts). A write by this process may have changed the session's row or log; another
    process's cannot have changed the log (this one runs the session), and its change to
    the row is one the load may see as made after it."""

    __slots__ = ("_load", "_seq", "_writes", "_written")

    def __init__(self, writes: Callable[[], int]) -> None:
        self._writes = writes
        self._written = -1
        self._seq: SeqHint | None = None
        self._load: LoadHint | None = None

    def hold(self, seq: SeqHint, load: LoadHint, written: int) -> None:
        """Keep the hints a claim read when the write count was `written`."""
        self._seq, self._load, self._written = seq, load, written

    def take_seq(self, session_key: str) -> int | None:
        """The last event seq, when the hint serves `session_key` (used once)."""
        hint, self._seq = self._seq, None
        if hint is None or not hint.serves(session_key) or self._writes() != self._written:
            return None
        return hint.seq

    def load(self, session_key: str, *, take: bool) -> LoadHint | None:
        """The row and stamp, when the hint serves `session_key`; `take`: used once."""
        hint = self._load
        if take:
            self._load = None
        if hint is None or not hint.serves(session_key) or self._writes() != self._written:
            return None
        return hint
