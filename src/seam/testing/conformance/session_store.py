"""The whole `SessionStore` conformance suite: every conversation-store protocol's suite
in one class, for a backend that implements them all (every built-in one does).

Fixtures: `clock` and `store`, a whole `SessionStore` (see the package docstring).
"""

from __future__ import annotations

from seam.contracts.sessions import (
    SessionCatalogue,
    SessionStore,
    SessionTitles,
    SessionUpkeep,
    Transcript,
    UsageLedger,
)
from seam.testing.conformance.catalogue import SessionCatalogueSuite
from seam.testing.conformance.search import SessionSearchSuite
from seam.testing.conformance.titles import SessionTitlesSuite
from seam.testing.conformance.transcript import TranscriptSuite
from seam.testing.conformance.upkeep import SessionUpkeepSuite
from seam.testing.conformance.usage import UsageLedgerSuite


class SessionStoreSuite(
    TranscriptSuite,
    SessionTitlesSuite,
    SessionCatalogueSuite,
    SessionSearchSuite,
    SessionUpkeepSuite,
    UsageLedgerSuite,
):
    """Each protocol's suite, plus: the store is every one of those protocols."""

    async def test_is_every_session_protocol(self, store: SessionStore) -> None:
        for protocol in (Transcript, SessionTitles, SessionCatalogue, SessionUpkeep, UsageLedger):
            assert isinstance(store, protocol)

    async def test_is_a_session_store(self, store: SessionStore) -> None:
        assert isinstance(store, SessionStore)
