"""Store conformance suites: one per store protocol, written once, run against every
backend (docs/stores.md: writing a store backend).

A suite is a class of pytest tests. A backend's test module subclasses it and provides
its fixtures (each suite's docstring names them): usually `clock`, a `ManualClock` from
`seam.testing.clock`, and `store`, a fresh, empty store built with that clock. The
session suites' `store` is a whole `SessionStore` (a test needs sessions to exist
before it can check its protocol's part); the execution suites' an `ExecutionStore`.

| protocol (seam.contracts)      | suite                                           |
|--------------------------------|-------------------------------------------------|
| sessions.Transcript            | transcript.TranscriptSuite                      |
| sessions.SessionTitles         | titles.SessionTitlesSuite                       |
| sessions.SessionCatalogue      | catalogue.SessionCatalogueSuite, search.SessionSearchSuite |
| sessions.SessionUpkeep         | upkeep.SessionUpkeepSuite                       |
| sessions.UsageLedger           | usage.UsageLedgerSuite                          |
| sessions.SessionStore (all)    | session_store.SessionStoreSuite                 |
| execution.SubmissionQueue      | submissions.SubmissionQueueSuite                |
| execution.SubmissionLeases     | submissions.SubmissionLeasesSuite               |
|   (admit_and_claim)            | admit_claimed.AdmitAndClaimSuite                |
| execution.TurnJournal          | journal.TurnJournalSuite                        |
| execution.EventLog             | journal.EventLogSuite                           |
| images.ImageBlobs              | images.ImageBlobsSuite                          |
| execution.ExecutionStore       | execution_store.ExecutionStoreSuite (+ SessionStoreSuite) |
| outbox.Outbox                  | outbox.OutboxSuite                              |
| approval_answers.ApprovalAnswers | approval_relay.ApprovalRelaySuite             |
| cron.CronJobBook              | cron.CronJobBookSuite                           |
| cron.CronRunLedger             | cron.CronRunLedgerSuite                         |
| cron.CronStore (both)          | cron.CronStoreSuite                             |
| context.CompactionLog          | compaction_log.CompactionLogSuite               |
| session_recall.MessageVectors  | message_vectors.MessageVectorsSuite (stores that keep vectors) |
| (outages)                      | faults.FaultSuite                               |

The modules import pytest; this package's `__init__` does not, so listing it is free.
"""
