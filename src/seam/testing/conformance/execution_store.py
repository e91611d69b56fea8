"""The `ExecutionStore` conformance suite beyond the conversation store: every execution
protocol's suite in one class (run `SessionStoreSuite` too for the sessions part).

Fixtures: `clock` and `store`, an `ExecutionStore` (see the package docstring).
"""

from __future__ import annotations

from seam.contracts.execution import (
    EventLog,
    ExecutionStore,
    SubmissionLeases,
    SubmissionQueue,
    TurnJournal,
)
from seam.testing.conformance.admit_claimed import AdmitAndClaimSuite
from seam.testing.conformance.images import ImageBlobsSuite
from seam.testing.conformance.journal import EventLogSuite, TurnJournalSuite
from seam.testing.conformance.submissions import SubmissionLeasesSuite, SubmissionQueueSuite


class ExecutionStoreSuite(
    SubmissionQueueSuite,
    SubmissionLeasesSuite,
    AdmitAndClaimSuite,
    TurnJournalSuite,
    EventLogSuite,
    ImageBlobsSuite,
):
    """Each execution protocol's suite (the conversation store's is `SessionStoreSuite`),
    plus: the store is every one of those protocols."""

    async def test_is_every_execution_protocol(self, store: ExecutionStore) -> None:
        for protocol in (SubmissionQueue, SubmissionLeases, TurnJournal, EventLog, ExecutionStore):
            assert isinstance(store, protocol)
