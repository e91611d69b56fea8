"""Memory consolidation as a cron job of kind `consolidate` (`seam memory consolidate
--enable`), run by the cron scheduler like any job: one claim per slot however many
schedulers run, the missed-run policy, failures counted and alerted.

Its run is no turn: the kind does the work itself (`run_inline`, see
`contracts.cron.InlineCronKind`), as a scheduled run (`trigger` "cron",
`skip_unchanged`): when no memory file changed since the last run, no model is called
and the run's record says so. The run ends `failed` when the model could not answer
(so a broken side model is alerted, not silently idle); a refused answer is the
consolidation working as meant, and the run `completed`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from seam.contracts.cron import CronJob, CronRun, JobKind, RunOutcome
from seam.contracts.execution import Submission
from seam.plugins.memory.consolidate import MODEL_FAILED, Consolidator

CONSOLIDATE_JOB = "memory-consolidate"
CONSOLIDATE_KIND: JobKind = "consolidate"
# What `seam cron list` shows as the job's prompt: no turn ever gets it.
JOB_PROMPT = "Consolidate memory: merge duplicates, drop contradicted entries (no turn)"


@dataclass
class ConsolidateKind:
    """The `consolidate` job kind's hooks; `consolidator` is built on first run."""

    consolidator: Callable[[], Consolidator]

    async def skip_reason(self, job: CronJob, now: float) -> str | None:
        return None

    async def skipped(self, job: CronJob, run: CronRun, reason: str) -> None:
        return None

    async def deliver(self, job: CronJob, run: CronRun, sub: Submission) -> str:
        return "none"  # never called: the run is no turn

    async def run_inline(self, job: CronJob, run: CronRun) -> RunOutcome:
        record = await self.consolidator().run("cron", skip_unchanged=True)
        failed = any(r.reason.startswith(MODEL_FAILED) for r in record.refused)
        return "failed" if failed else "completed"
